// What a sampled peak costs the allocating thread. --count cudaMalloc calls of 256 MiB
// climb to count × 256 MiB (25 GiB by default); each lifts tracked bytes past the last
// sampled peak by at least the margin (max(1 %, 64 MiB): trace_format.h), so under the
// tracer each reads NVML before it returns. Then everything is freed and the same climb
// is made again: the sampled peak is already at the top, so none of those crosses it.
// The difference between the two climbs, traced, is the cost of a sampled peak; untraced
// it is the noise. Prints one line; run it traced and untraced, interleaved
// (docs/performance.md, "Sampled peaks").
//
//   sampled_peak [--count N]
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// ns per allocation of one climb; frees what it made.
double climb(int count, size_t step) {
  std::vector<void*> held(size_t(count), nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  for (auto& p : held)
    if (cudaMalloc(&p, step) != cudaSuccess) std::fprintf(stderr, "cudaMalloc failed\n"), std::exit(1);
  const auto t1 = std::chrono::steady_clock::now();
  for (auto p : held) cudaFree(p);
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / count;
}

}  // namespace

int main(int argc, char** argv) {
  int count = 100;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--count") && i + 1 < argc) count = std::atoi(argv[++i]);
    else return std::fprintf(stderr, "usage: %s [--count N]\n", argv[0]), 2;
  }
  const size_t step = size_t(256) << 20;
  void* warm = nullptr;
  cudaMalloc(&warm, 512);  // context and first-use costs out of the timed climbs
  const double crossing = climb(count, step);
  const double repeat = climb(count, step);
  cudaFree(warm);
  std::printf("count=%d step_bytes=%zu crossing_ns_alloc=%.0f repeat_ns_alloc=%.0f difference_ns=%.0f\n", count, step,
              crossing, repeat, crossing - repeat);
  return 0;
}
