// A known list of allocations through every runtime entry point cumemtrace hooks, built
// with nvcc's default static cudart (`nvcc static_runtime.cu -o static_runtime`): with
// static cudart no cuda* symbol can be interposed, so everything must be caught below the
// runtime (cuGetProcAddress / the driver entry points). check_programs.py compares the
// trace with the lines this prints:
//   alloc <api> <kind> 0x<addr> <bytes>      one per successful allocation
//   free <api> <kind> 0x<addr>               one per free
//   checkpoint <label> <CLOCK_MONOTONIC ns>  "all-live": every allocation above is live
//                                            "all-freed": nothing of ours is live
// <kind> is the cumemtrace kind name the allocation should be recorded as; <bytes> is
// the size the trace should record (pitch allocations: pitch x rows).
// Exit status 0 when every call succeeded, 1 otherwise (message on stderr).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <vector>

namespace {

struct Alloc {
  const char* api;
  const char* kind;
  void* ptr;
  size_t bytes;
  const char* free_api;
};

std::vector<Alloc> allocs;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "FAILED: %s returned %d (%s)\n", what, int(e), cudaGetErrorString(e));
    std::exit(1);
  }
}

unsigned long long monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void record(const char* api, const char* kind, void* p, size_t bytes, const char* free_api) {
  allocs.push_back({api, kind, p, bytes, free_api});
  std::printf("alloc %s %s %p %zu\n", api, kind, p, bytes);
}

}  // namespace

int main() {
  check(cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t stream;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");

  void* p = nullptr;
  // Two 512 B blocks share one 2 MiB page; 3 MiB takes a run of its own.
  check(cudaMalloc(&p, 512), "cudaMalloc(512)");
  record("cudaMalloc", "device", p, 512, "cudaFree");
  check(cudaMalloc(&p, 512), "cudaMalloc(512)");
  record("cudaMalloc", "device", p, 512, "cudaFree");
  check(cudaMalloc(&p, 3u << 20), "cudaMalloc(3 MiB)");
  record("cudaMalloc", "device", p, 3u << 20, "cudaFree");

  size_t pitch = 0;
  check(cudaMallocPitch(&p, &pitch, 1000, 100), "cudaMallocPitch(1000 x 100)");
  record("cudaMallocPitch", "pitch", p, pitch * 100, "cudaFree");

  cudaPitchedPtr pp{};
  check(cudaMalloc3D(&pp, make_cudaExtent(300, 20, 10)), "cudaMalloc3D(300 x 20 x 10)");
  record("cudaMalloc3D", "pitch", pp.ptr, pp.pitch * 20 * 10, "cudaFree");

  check(cudaMallocManaged(&p, 4096, cudaMemAttachGlobal), "cudaMallocManaged(4 KiB)");
  record("cudaMallocManaged", "managed", p, 4096, "cudaFree");

  check(cudaMallocAsync(&p, 1u << 20, stream), "cudaMallocAsync(1 MiB)");
  record("cudaMallocAsync", "async-pool", p, 1u << 20, "cudaFreeAsync");
  check(cudaMallocAsync(&p, 3u << 20, stream), "cudaMallocAsync(3 MiB)");
  record("cudaMallocAsync", "async-pool", p, 3u << 20, "cudaFreeAsync");

  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool;
  check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate");
  check(cudaMallocFromPoolAsync(&p, 5u << 20, pool, stream), "cudaMallocFromPoolAsync(5 MiB)");
  record("cudaMallocFromPoolAsync", "async-pool", p, 5u << 20, "cudaFreeAsync");

  check(cudaMallocHost(&p, 4096), "cudaMallocHost(4 KiB)");
  record("cudaMallocHost", "host-pinned", p, 4096, "cudaFreeHost");
  check(cudaHostAlloc(&p, 8192, cudaHostAllocDefault), "cudaHostAlloc(8 KiB)");
  record("cudaHostAlloc", "host-pinned", p, 8192, "cudaFreeHost");
  check(cudaHostAlloc(&p, 65536, cudaHostAllocPortable | cudaHostAllocMapped), "cudaHostAlloc(64 KiB, mapped)");
  record("cudaHostAlloc", "host-pinned", p, 65536, "cudaFreeHost");

  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::printf("checkpoint all-live %llu\n", monotonic_ns());
  std::fflush(stdout);

  for (const Alloc& a : allocs) {
    const std::string_view fa = a.free_api;
    if (fa == "cudaFreeAsync") check(cudaFreeAsync(a.ptr, stream), "cudaFreeAsync");
    else if (fa == "cudaFreeHost") check(cudaFreeHost(a.ptr), "cudaFreeHost");
    else check(cudaFree(a.ptr), "cudaFree");
    std::printf("free %s %s %p\n", a.free_api, a.kind, a.ptr);
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  check(cudaMemPoolDestroy(pool), "cudaMemPoolDestroy");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  std::printf("checkpoint all-freed %llu\n", monotonic_ns());
  std::printf("done allocs=%zu\n", allocs.size());
  return 0;
}
