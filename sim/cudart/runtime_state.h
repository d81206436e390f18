// Per-thread runtime state (current device, last error) and the lazy context
// set-up that every context-needing runtime call goes through.
#pragma once

#include "driver_link.h"

namespace simrt {

// CUresult -> cudaError_t, e.g. CUDA_ERROR_OUT_OF_MEMORY -> cudaErrorMemoryAllocation.
cudaError_t to_runtime(CUresult r);

// Records a failure as the thread's last error (cudaGetLastError) and passes it on.
cudaError_t result(cudaError_t e);
inline cudaError_t result(CUresult r) { return result(to_runtime(r)); }
cudaError_t last_error(bool reset);

// Loads the driver and runs cuInit(0) once; fills *api.
cudaError_t init_driver(const DriverApi **api);
// init_driver, then make sure the thread has a current context: the one it
// already has (set through the driver API, as the real runtime accepts), or
// else the current device's primary context, retained once per process.
cudaError_t ensure_context(const DriverApi **api);

int current_device();
// cudaSetDevice: since CUDA 12 it initialises the device's primary context at once.
cudaError_t set_device(int device);

// cudaDeviceReset: resets the current device's primary context (its allocations go with
// it) and forgets it, so the next call on the device retains a fresh one.
cudaError_t reset_device();

}  // namespace simrt
