// The cost of one cudaMalloc+cudaFree pair, plain or traced: the figure users ask about
// before putting a tracer in front of an allocator that may call cudaMalloc thousands of
// times a second. Native on an H200 (measured before): a 512 B pair ~2-3 us (the driver
// suballocates it from an already-held 2 MiB page), a 2 MiB pair ~65 us (a fresh page,
// mapped and unmapped each time). validate.sh runs this plain, traced with
// CUMEMTRACE_DEPTH=0 and traced with the default 32-frame stacks.
//
// usage: alloc_loop LABEL [PAIRS_512B [PAIRS_2MIB [REPS]]]
// One JSON line per size on stdout:
//   {"label":..,"size":512,"pairs":N,"reps":R,"median_ns_per_pair":..,"min_ns_per_pair":..,
//    "ns_per_pair":[..one per rep..]}
// Exit status 0, or 1 with FAILED: on stderr.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "FAILED: %s returned %d (%s)\n", what, int(e), cudaGetErrorString(e));
    std::exit(1);
  }
}

double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

void pairs(size_t size, long n) {
  for (long i = 0; i < n; ++i) {
    void* p = nullptr;
    check(cudaMalloc(&p, size), "cudaMalloc");
    check(cudaFree(p), "cudaFree");
  }
}

void measure(const char* label, size_t size, long n, int reps) {
  pairs(size, n / 10 + 1);  // warm-up: first-touch costs are not what we measure
  std::vector<double> per_pair;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now_ns();
    pairs(size, n);
    per_pair.push_back((now_ns() - t0) / double(n));
  }
  std::vector<double> sorted = per_pair;
  std::sort(sorted.begin(), sorted.end());
  std::printf(
      "{\"label\":\"%s\",\"size\":%zu,\"pairs\":%ld,\"reps\":%d,\"median_ns_per_pair\":%.1f,"
      "\"min_ns_per_pair\":%.1f,\"ns_per_pair\":[",
      label, size, n, reps, sorted[sorted.size() / 2], sorted.front());
  for (size_t i = 0; i < per_pair.size(); ++i) std::printf("%s%.1f", i ? "," : "", per_pair[i]);
  std::printf("]}\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const char* label = argc > 1 ? argv[1] : "plain";
  const long small_pairs = argc > 2 ? std::atol(argv[2]) : 20000;
  const long large_pairs = argc > 3 ? std::atol(argv[3]) : 1000;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 7;
  if (small_pairs <= 0 || large_pairs <= 0 || reps <= 0) {
    std::fprintf(stderr, "usage: alloc_loop LABEL [PAIRS_512B [PAIRS_2MIB [REPS]]]\n");
    return 2;
  }
  check(cudaFree(nullptr), "cudaFree(NULL)");  // context creation, outside the timing
  // Held for the whole run so that every 512 B pair lands in an already-held 2 MiB page.
  void* hold = nullptr;
  check(cudaMalloc(&hold, 512), "cudaMalloc(hold 512 B)");
  measure(label, 512, small_pairs, reps);
  measure(label, 2u << 20, large_pairs, reps);
  check(cudaFree(hold), "cudaFree(hold)");
  return 0;
}
