// A job's worth of allocation events with a realistic mix, for the trace's bytes per
// event and the analyzer's throughput (docs/performance.md):
//   mixed_events [EVENTS] [CALL_SITES] [KEPT]   (default 1000000 events, 64 call sites, 0 kept)
// cudaMalloc/cudaFree through the simulated runtime: sizes log-uniform from 512 B to
// 64 MiB rounded to 512 B, a live set of about 2,000 that is freed in random order, each
// allocation from one of CALL_SITES distinct call paths (a recursion whose depth picks
// the path, so the stacks differ in their outer frames as a framework's do). KEPT more
// allocations, spread evenly over the run and never freed, make the live set at the end
// (512 B-64 KiB each, so that a million fit the simulated device): the analyzer's memory
// per live allocation (bench/run_scale.sh). Fixed seed: the same events every run.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

std::mt19937_64 rng(42);

__attribute__((noinline)) void* allocate(size_t size, int depth) {
  if (depth > 0) {
    void* p = allocate(size, depth - 1);
    asm volatile("" ::: "memory");  // not a tail call: each level is a frame
    return p;
  }
  void* p = nullptr;
  return cudaMalloc(&p, size) == cudaSuccess ? p : nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const long events = argc > 1 ? std::atol(argv[1]) : 1000000;
  const int sites = argc > 2 ? std::atoi(argv[2]) : 64;
  const long kept = argc > 3 ? std::atol(argv[3]) : 0;
  const long keep_every = kept > 0 ? std::max(1L, events / kept) : 0;
  std::uniform_real_distribution<double> log_kept(std::log(512.0), std::log(64.0 * 1024));
  long made_kept = 0;
  std::uniform_real_distribution<double> log_size(std::log(512.0), std::log(64.0 * (1 << 20)));
  std::uniform_int_distribution<int> site(0, sites - 1);
  std::vector<void*> live;
  long made = 0;
  while (made < events) {
    if (keep_every && made % keep_every == 0 && made_kept < kept) {
      const size_t size = (size_t(std::exp(log_kept(rng))) + 511) / 512 * 512;
      if (allocate(size, site(rng))) ++made_kept;
      ++made;
      continue;
    }
    const bool grow = live.size() < 1000 || (live.size() < 3000 && rng() % 2 == 0);
    if (grow) {
      const size_t size = (size_t(std::exp(log_size(rng))) + 511) / 512 * 512;
      if (void* p = allocate(size, site(rng))) live.push_back(p);
    } else {
      const size_t i = rng() % live.size();
      cudaFree(live[i]);
      live[i] = live.back();
      live.pop_back();
    }
    ++made;
  }
  for (void* p : live) cudaFree(p);
  std::printf("%ld events, %d call sites, %ld kept\n", made + long(live.size()), sites, made_kept);
  return 0;
}
