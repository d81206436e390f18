// A training loop's allocation events, for the growth analysis at scale (bench/run_scale.sh;
// docs/performance.md, "Growth across many iterations"):
//   loop_events [ALLOCATIONS] [KEPT]   (default 200000 allocations, 0 kept)
// Each iteration allocates once from each of four call sites and then frees what the
// iteration before allocated, so that `report` finds the loop from the allocations
// (reports/growth/iterations.h: one boundary at each allocation of the first site). KEPT of the
// allocations, spread evenly over the run, are never freed: the live set that grows from
// one boundary to the next. Sizes 1-8 KiB, so that a million kept fit the simulated device.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// One function per call site: four distinct stacks.
template <int Site>
__attribute__((noinline)) void* allocate() {
  void* p = nullptr;
  asm volatile("" ::: "memory");  // not folded into one another
  return cudaMalloc(&p, size_t(1024) << Site) == cudaSuccess ? p : nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const long allocations = argc > 1 ? std::atol(argv[1]) : 200000;
  const long kept = argc > 2 ? std::atol(argv[2]) : 0;
  const long keep_every = kept > 0 ? std::max(1L, allocations / kept) : 0;
  long made = 0, made_kept = 0;
  std::vector<void*> before, now;
  while (made < allocations) {
    now.clear();
    const std::array<void* (*)(), 4> sites{allocate<0>, allocate<1>, allocate<2>, allocate<3>};
    for (size_t s = 0; s < sites.size() && made < allocations; ++s, ++made) {
      void* p = sites[s]();
      if (!p) return 1;
      if (keep_every && made % keep_every == 0 && made_kept < kept) ++made_kept;
      else now.push_back(p);
    }
    for (void* p : before) cudaFree(p);
    before.swap(now);
  }
  for (void* p : before) cudaFree(p);
  std::printf("%ld allocations, %ld kept\n", made, made_kept);
  return 0;
}
