// Cost of FragmentationIndex (include/cumemtrace/rules/fragmentation.h) with many live
// allocations: the hook pays insert/erase under the tracker's mutex, and every periodic
// snapshot pays figures() for each device, also under it. The issue asks that "a
// snapshot of 100k live allocations must not stall the job"; BM_Figures measures it and
// BM_ScanLive shows what a snapshot that walked the live set would cost instead.
//
// Layout: N live 512 B allocations at a 1 KiB stride (2048 per 2 MiB granule, a 512 B gap
// after each), so inserts land in gaps between live neighbours and change real figures.
#include <benchmark/benchmark.h>

#include "cumemtrace/rules/fragmentation.h"

#include <cstdint>
#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace {

using cumemtrace::FragmentationIndex;

constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint64_t kSize = 512, kStride = 1024;

void fill(FragmentationIndex& index, int64_t n) {
  for (int64_t i = 0; i < n; ++i) index.insert(kBase + uint64_t(i) * kStride, kSize);
}

// Gap slots visited in a shuffled order, so at 100k the tree walk is not cache-friendly
// by accident.
std::vector<uint64_t> shuffled_gaps(int64_t n) {
  std::vector<uint64_t> gaps(static_cast<size_t>(n));
  std::iota(gaps.begin(), gaps.end(), uint64_t{0});
  std::mt19937_64 rng(42);
  std::shuffle(gaps.begin(), gaps.end(), rng);
  for (auto& g : gaps) g = kBase + g * kStride + kSize;
  return gaps;
}

// One allocation and its free with N others live: what two hooked calls add to the index.
void BM_InsertErase(benchmark::State& state) {
  const int64_t n = state.range(0);
  FragmentationIndex index;
  fill(index, n);
  const auto gaps = shuffled_gaps(n);
  size_t k = 0;
  for (auto _ : state) {
    const uint64_t at = gaps[k];
    k = k + 1 == gaps.size() ? 0 : k + 1;
    benchmark::DoNotOptimize(index.insert(at, kSize));
    benchmark::DoNotOptimize(index.erase(at));
  }
  state.SetItemsProcessed(state.iterations() * 2);  // items = calls (insert or erase)
}
BENCHMARK(BM_InsertErase)->Arg(1000)->Arg(100000);

// Building the index from empty: per insert, appending at the high end as the sim's
// first-fit allocator does for a growing live set.
void BM_Fill(benchmark::State& state) {
  const int64_t n = state.range(0);
  for (auto _ : state) {
    FragmentationIndex index;
    fill(index, n);
    benchmark::DoNotOptimize(index.figures().live_count);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_Fill)->Arg(1000)->Arg(100000)->Unit(benchmark::kMicrosecond);

// What a periodic snapshot reads per device.
void BM_Figures(benchmark::State& state) {
  FragmentationIndex index;
  fill(index, state.range(0));
  for (auto _ : state) {
    auto f = index.figures();
    benchmark::DoNotOptimize(f);
  }
}
BENCHMARK(BM_Figures)->Arg(1000)->Arg(100000);

// For contrast: a snapshot that recomputed the figures by walking every live range.
void BM_ScanLive(benchmark::State& state) {
  FragmentationIndex index;
  fill(index, state.range(0));
  for (auto _ : state) {
    uint64_t gap = 0, prev_end = 0;
    for (const auto& [start, size] : index.live()) {
      gap += prev_end && start > prev_end ? start - prev_end : 0;
      prev_end = start + size;
    }
    benchmark::DoNotOptimize(gap);
  }
}
BENCHMARK(BM_ScanLive)->Arg(1000)->Arg(100000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
