// The toolkit headers, as the runtime itself would see them: with the
// internal-version switch, cuda_runtime_api.h declares both the legacy and the
// _ptsz names, so each can be defined under its exact exported name.
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
