/* A training loop on the stand-in for PyTorch's caching allocator (sim/torch/simtorch.h),
 * whose blocks the tracer reads from the allocator's own reports. SIMCUDA_CONTEXT_BYTES=0
 * and SIMCUDA_CAPACITY=1 GiB make every figure below exact.
 *
 * "loop" (the default): weights of 16 MiB (a 16 MiB segment); then 5 steps, each marked
 * "step" at its start: an activation of 8 MiB (from a 20 MiB segment, the first time) and
 * a 4 MiB tensor kept in a list by keep_history (from the same segment while it lasts),
 * the activation freed. keep_history's blocks live at the iterations' boundaries (the
 * five marks, then the trace's end): 0, 4, 8, 12, 16, 20 MiB, a leak of 4 MiB per
 * iteration that the segments do not show: they grow twice (20 MiB in steps 0 and 3). Segments: 16 MiB, then 20 MiB in
 * step 0 (the activation's 8 MiB slot and the kept tensors of steps 0-2), then 20 MiB in step 3, whose kept tensor
 * finds no free block (step 4's comes from the same segment): 56 MiB reserved at the end; allocated at the end 16 + 20
 * = 36 MiB; peak allocated 16 + 20 + 8 = 44 MiB (in step 4, before its activation is freed).
 *
 * "unmarked": the same loop with no mark: the iterations are found from the blocks, each
 * starting just before an activation's allocation (the stack that recurs first), the last
 * one whole (it allocates and frees as the others), so the trace's end is a boundary too:
 * keep_history's blocks at the boundaries are 0, 4, 8, 12, 16, 20 MiB again.
 *
 * "limit": the memory fraction 0.25 (256 MiB), then 300 MiB: the allocator refuses with no
 * driver call (allocated 0, reserved 0: the request alone is over the limit).
 *
 * "demand": tensors of 200 MiB until the device is full: 5 fit (1000 MiB), the 6th fails
 * in the driver with nothing free in the cache: the live tensors need the memory.
 *
 * "crowded": the same while another process holds 600 MiB of the 1000 MiB (the test sets
 * SIMCUDA_OTHER_PROCESS_BYTES): 2 fit (400 MiB), the 3rd fails with 24 MiB free; the other
 * process's 600 MiB would make it fit as well as the tensors' 400 MiB would.
 *
 * "fragmented": one 100 MiB segment cut into five 20 MiB tensors, the 2nd and the 4th
 * freed (40 MiB free inside the cache, the largest free block 20 MiB); 900 MiB more fill
 * the device (a 900 MiB segment: 1000 MiB reserved, 24 MiB left); then 30 MiB: no free
 * block is as large, and the driver has 24 MiB: the cache is fragmented.
 *
 * "streams": what only the allocator's trace entries tell. Weights of 16 MiB (a 16 MiB
 * segment); A, 8 MiB asked as 8,000,000 B on stream 7 (rounded to 8,000,000: a multiple of
 * 512; a 20 MiB segment, A at its start), used on another stream and freed: its free waits,
 * so B (8 MiB) cannot take A's block and takes the next one, [8,16) of the segment; then the
 * events complete and A's block is back in the cache; then G, 4 MiB in pool 5 (a CUDA
 * graph's), from a 20 MiB segment of that pool's own. Allocated at the end 16 + 8 + 4 = 28
 * MiB; reserved 56 MiB; before the events completed, 8,000,000 B were pending.
 *
 * "pending": 600 MiB used on another stream and freed: its free waits, and its segment
 * cannot be given back; then 500 MiB: no free block, and the driver has 424 MiB left: the
 * allocator fails with 600 MiB reserved, none allocated, all of it pending (pending-frees).
 * Once the events complete, the same 500 MiB comes from that segment.
 *
 * "stale": two tensors of 4 MiB from one 20 MiB segment (at its start and 4 MiB in); then
 * the program gives the segment back to the driver behind the allocator's back (cudaFree of
 * the first tensor's address, the segment's), and a third tensor of 4 MiB comes from the
 * gone segment, 8 MiB in: its report lies in no memory the driver gave, and the tracer must
 * see that though the block before it, in the same span, was covered. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "simtorch.h"

#define MiB ((size_t)1 << 20)

typedef int (*mark_fn)(const char*);
static mark_fn mark;

static void mark_step(void) {
  if (mark) mark("step");
}

__attribute__((noinline)) static void* keep_history(size_t bytes) {
  void* volatile p = simtorch_malloc(bytes, 0); /* no tail call: this frame stays on the stack */
  return p;
}

static volatile int activations;

__attribute__((noinline)) static void* activation(size_t bytes) {
  ++activations; /* not keep_history's twin: the linker must not fold the two into one */
  void* volatile p = simtorch_malloc(bytes, 0);
  return p;
}

static int loop(int marked) {
  void* weights = simtorch_malloc(16 * MiB, 0);
  void* kept[5];
  if (!weights) return 1;
  for (int step = 0; step < 5; ++step) {
    if (marked) mark_step();
    void* act = activation(8 * MiB);
    kept[step] = keep_history(4 * MiB);
    if (!act || !kept[step]) return 1;
    simtorch_free(act);
  }
  const struct simtorch_counts c = simtorch_reports();
  printf("allocated %zu reserved %zu; reports %llu allocs %llu frees\n", simtorch_memory_allocated(0),
         simtorch_memory_reserved(0), (unsigned long long)c.usage_allocs, (unsigned long long)c.usage_frees);
  return 0;
}

static int limit(void) {
  simtorch_set_memory_fraction(0.25, 0);
  void* p = simtorch_malloc(300 * MiB, 0);
  printf("limit: %s, %llu reported\n", p ? "allocated" : "out of memory",
         (unsigned long long)simtorch_reports().out_of_memory);
  return p ? 1 : 0;
}

static int demand(const char* what, int expected) {
  int n = 0;
  while (simtorch_malloc(200 * MiB, 0)) ++n;
  printf("%s: %d tensors\n", what, n);
  return n == expected ? 0 : 1;
}

static int fragmented(void) {
  void* whole = simtorch_malloc(100 * MiB, 0);
  void* part[5];
  simtorch_free(whole);
  for (int i = 0; i < 5; ++i) part[i] = simtorch_malloc(20 * MiB, 0);
  simtorch_free(part[1]);
  simtorch_free(part[3]);
  if (!simtorch_malloc(900 * MiB, 0)) return 1;
  void* p = simtorch_malloc(30 * MiB, 0);
  printf("fragmented: %s, allocated %zu reserved %zu\n", p ? "allocated" : "out of memory",
         simtorch_memory_allocated(0), simtorch_memory_reserved(0));
  return p ? 1 : 0;
}

static int streams(void) {
  void* weights = simtorch_malloc(16 * MiB, 0);
  void* a = simtorch_malloc_in(8000000, 0, 7, 0);
  simtorch_record_stream(a);
  simtorch_free(a);
  void* b = simtorch_malloc(8 * MiB, 0);
  const size_t pending_allocated = simtorch_memory_allocated(0);
  simtorch_process_events();
  void* g = simtorch_malloc_in(4 * MiB, 0, 0, 5);
  printf("streams: b at a+%zu, allocated %zu then %zu, reserved %zu\n", (size_t)((char*)b - (char*)a),
         pending_allocated, simtorch_memory_allocated(0), simtorch_memory_reserved(0));
  return weights && b && g ? 0 : 1;
}

static int pending(void) {
  void* a = simtorch_malloc(600 * MiB, 0);
  simtorch_record_stream(a);
  simtorch_free(a);
  void* refused = simtorch_malloc(500 * MiB, 0);
  simtorch_process_events();
  void* b = simtorch_malloc(500 * MiB, 0);
  printf("pending: %s, then %s at a+%zu\n", refused ? "allocated" : "out of memory", b ? "allocated" : "refused",
         (size_t)((char*)b - (char*)a));
  return !refused && b ? 0 : 1;
}

static int stale(void) {
  char* a = simtorch_malloc(4 * MiB, 0);
  char* b = simtorch_malloc(4 * MiB, 0);
  if (!a || b != a + 4 * MiB || cudaFree(a) != cudaSuccess) return 1;
  char* c = simtorch_malloc(4 * MiB, 0);
  printf("stale: the third tensor at a+%zu\n", (size_t)(c - a));
  return c == a + 8 * MiB ? 0 : 1;
}

int main(int argc, char** argv) {
  mark = (mark_fn)dlsym(RTLD_DEFAULT, "cumemtrace_mark");
  if (cudaSetDevice(0) != cudaSuccess || cudaFree(0) != cudaSuccess) return 2;
  const char* what = argc > 1 ? argv[1] : "loop";
  if (strcmp(what, "loop") == 0) return loop(1);
  if (strcmp(what, "unmarked") == 0) return loop(0);
  if (strcmp(what, "limit") == 0) return limit();
  if (strcmp(what, "demand") == 0) return demand(what, 5);
  if (strcmp(what, "crowded") == 0) return demand(what, 2);
  if (strcmp(what, "fragmented") == 0) return fragmented();
  if (strcmp(what, "streams") == 0) return streams();
  if (strcmp(what, "pending") == 0) return pending();
  if (strcmp(what, "stale") == 0) return stale();
  return 2;
}
