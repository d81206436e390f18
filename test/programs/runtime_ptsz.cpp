// Built with CUDA_API_PER_THREAD_DEFAULT_STREAM (see CMakeLists.txt), as code
// compiled with nvcc --default-stream per-thread is: the header then maps
// cudaMallocAsync to cudaMallocAsync_ptsz and so on.
#include "runtime_common.h"

int scenario_async_ptsz() {
  void* p;
  CHECK_RT(cudaMallocAsync(&p, 4096, cudaStreamPerThread));
  report_alloc("cudaMallocAsync_ptsz", p, 4096);
  CHECK_RT(cudaFreeAsync(p, cudaStreamPerThread));
  report_free("cudaFreeAsync_ptsz", p);
  CHECK_RT(cudaStreamSynchronize(cudaStreamPerThread));
  return 0;
}
