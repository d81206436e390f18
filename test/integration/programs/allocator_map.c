/* A caching allocator's block map given at an out-of-memory failure, the way PyTorch's
   OOM observer gives it (python/cumemtrace/torch.py), on a 16 GiB simulated device
   (SIMCUDA_CAPACITY=17179869184): keeps a 9 GiB segment, fails to get 9 GiB more, then
   describes the segment as 36 blocks of 256 MiB — block 0 pending free, every sixth
   (5, 11, ..., 35) free, the other 29 allocated — plus a 2 MiB small segment at an
   address nothing allocated, all free. Then makes one call with a block range outside
   the array, which must be refused. The API is found with dlsym, so untraced the
   program runs the same and says the tracer is absent. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>

#include <cumemtrace/api.h>

#define MiB (1ull << 20)
#define GiB (1ull << 30)

typedef int (*segments_fn)(const char*, int32_t, const struct cumemtrace_segment*, size_t,
                           const struct cumemtrace_block*, size_t);

int main(void) {
  void *p = NULL, *q = NULL;
  if (cudaMalloc(&p, 9 * GiB)) return 3;
  const cudaError_t e = cudaMalloc(&q, 9 * GiB);

  struct cumemtrace_block blocks[37];
  for (int i = 0; i < 36; ++i) {
    blocks[i].size = 256 * MiB;
    blocks[i].state = i == 0       ? CUMEMTRACE_BLOCK_ACTIVE_PENDING_FREE
                      : i % 6 == 5 ? CUMEMTRACE_BLOCK_INACTIVE
                                   : CUMEMTRACE_BLOCK_ACTIVE_ALLOCATED;
    blocks[i].reserved = 0;
  }
  blocks[36].size = 2 * MiB;
  blocks[36].state = CUMEMTRACE_BLOCK_INACTIVE;
  blocks[36].reserved = 0;
  const struct cumemtrace_segment segs[2] = {
      {(uint64_t)(uintptr_t)p, 9 * GiB, 29 * 256 * MiB, 0, 0, 36, 0, 0},
      {0x1000, 2 * MiB, 0, 0, 36, 1, 1, 0},
  };
  const struct cumemtrace_segment outside = {0x2000, 2 * MiB, 0, 0, 36, 2, 1, 0};

  segments_fn record = (segments_fn)dlsym(RTLD_DEFAULT, "cumemtrace_allocator_segments");
  if (!record) {
    printf("oom: %s; tracer absent\n", cudaGetErrorName(e));
  } else {
    const int map = record("pytorch", 0, segs, 2, blocks, 37);
    const int bad = record("pytorch", 0, &outside, 1, blocks, 37);
    printf("oom: %s; map: %d; bad: %d\n", cudaGetErrorName(e), map, bad);
  }
  return e == cudaErrorMemoryAllocation ? 0 : 1;
}
