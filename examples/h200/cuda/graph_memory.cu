// CUDA graph memory on a real GPU (issue 12 §2): what the device's graph memory pool holds
// after each step of two cases, as cudaDeviceGetGraphMemAttribute reports it, with NVML's
// view (cudaMemGetInfo's free bytes) beside it.
//   inside  3 x 1 GiB cudaMallocAsync, each freed inside the same stream capture
//   escape  3 x 1 GiB cudaMallocAsync in the capture, freed after the launch on the stream
// Steps: instantiate, launch, (escape: free), destroy exec + graph, trim.
//   nvcc -O2 -cudart shared -o graph_memory graph_memory.cu && ./graph_memory inside
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

#define CHECK(call)                                                \
  do {                                                             \
    cudaError_t e_ = (call);                                       \
    if (e_ != cudaSuccess) {                                       \
      std::printf("FAILED %s: %s\n", #call, cudaGetErrorName(e_)); \
      return 1;                                                    \
    }                                                              \
  } while (0)

static void figures(const char* step) {
  unsigned long long used = 0, reserved = 0, used_high = 0, reserved_high = 0;
  cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used);
  cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &reserved);
  cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemHigh, &used_high);
  cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemHigh, &reserved_high);
  size_t free_bytes = 0, total = 0;
  cudaMemGetInfo(&free_bytes, &total);
  std::printf(
      "%-12s graph pool: reserved %llu MiB, used %llu MiB (high: reserved %llu, used %llu); device free %zu MiB\n",
      step, reserved >> 20, used >> 20, reserved_high >> 20, used_high >> 20, free_bytes >> 20);
}

int main(int argc, char** argv) {
  const bool inside = argc > 1 && std::strcmp(argv[1], "inside") == 0;
  const bool escape = argc > 1 && std::strcmp(argv[1], "escape") == 0;
  if (!inside && !escape) {
    std::printf("usage: graph_memory inside|escape\n");
    return 2;
  }
  constexpr size_t kGiB = 1ull << 30;
  cudaStream_t s;
  CHECK(cudaSetDevice(0));
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  figures("start");
  void* p[3] = {};
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (void*& q : p) {
    CHECK(cudaMallocAsync(&q, kGiB, s));
    CHECK(cudaMemsetAsync(q, 1, kGiB, s));
    if (inside) CHECK(cudaFreeAsync(q, s));
  }
  CHECK(cudaStreamEndCapture(s, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  figures("instantiated");
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  figures("launched");
  if (escape) {
    for (void* q : p) CHECK(cudaFreeAsync(q, s));
    CHECK(cudaStreamSynchronize(s));
    figures("freed");
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaDeviceSynchronize());
  figures("destroyed");
  CHECK(cudaDeviceGraphMemTrim(0));
  CHECK(cudaDeviceSynchronize());
  figures("trimmed");
  return 0;
}
