// Times allocate+free pairs against the simulated driver, so that running it with and
// without LD_PRELOAD=libcumemtrace.so gives the tracer's added cost per intercepted call
// (bench/run_overhead.sh does the subtraction; docs/performance.md has the numbers).
//
//   alloc_loop [--api driver|runtime] [--frames N] [--unique] [--threads N] [--live N]
//              [--pairs N] [--reps N] [--latency]
//
//   --api      driver: cuMemAlloc_v2/cuMemFree_v2 (default); runtime: cudaMalloc/cudaFree
//              (the sim runtime reaches the driver through cuGetProcAddress, so under the
//              tracer both the runtime hook and the driver hook run)
//   --frames   run the timed loop N nested calls deep (default 0), so that a stack of
//              CUMEMTRACE_DEPTH=32 frames is really there to unwind (30 gives > 32 frames)
//   --unique   each pair from a call path never seen before (with --frames N: at each of
//              the N levels one of two functions, picked by a bit of a counter that never
//              repeats across repetitions); without it every pair has the same stack
//   --threads  run the loop in N threads at once (default 1); ns_call is then wall time
//              per call summed over threads (a throughput cost, which includes contention)
//   --live     make N live 512 B allocations before timing (default 0; see fill_live)
//   --pairs    pairs per repetition (default 100000); --reps repetitions (default 5),
//              after one untimed warm-up repetition
//   --latency  also time every pair on its own and report p50/p99.9/max
//
// Prints one line of key=value pairs; ns_call = ns per pair / 2 (alloc and free are each
// one intercepted call). best_ns_call is the fastest repetition, median_ns_call the median.
// One 512 B allocation is held throughout, so the sim's 2 MiB page never goes away and
// every pair costs the same.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  bool runtime = false;
  int frames = 0;
  bool unique = false;
  int threads = 1;
  long live = 0;
  long pairs = 100000;
  int reps = 5;
  bool latency = false;
};

[[noreturn]] void die(const char* what, long code) {
  std::fprintf(stderr, "FAILED: %s returned %ld\n", what, code);
  std::exit(1);
}

#define CHECK_CU(call)                                         \
  do {                                                         \
    CUresult r_ = (call);                                      \
    if (r_ != CUDA_SUCCESS) die(#call, static_cast<long>(r_)); \
  } while (0)
#define CHECK_RT(call)                                        \
  do {                                                        \
    cudaError_t r_ = (call);                                  \
    if (r_ != cudaSuccess) die(#call, static_cast<long>(r_)); \
  } while (0)

using Clock = std::chrono::steady_clock;

inline long long ns_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

// noinline: every pair goes through a real call from this frame, at the stack depth
// the caller set up.
__attribute__((noinline)) void pair(bool runtime) {
  if (runtime) {
    void* p;
    CHECK_RT(cudaMalloc(&p, 512));
    CHECK_RT(cudaFree(p));
  } else {
    CUdeviceptr p;
    CHECK_CU(cuMemAlloc_v2(&p, 512));
    CHECK_CU(cuMemFree_v2(p));
  }
}

// --unique: a path of `level` frames, each one of two functions by a bit of `path`.
__attribute__((noinline)) void path_b(int level, uint64_t path, bool runtime);
__attribute__((noinline)) void path_a(int level, uint64_t path, bool runtime) {
  if (level == 0) return pair(runtime);
  if (path >> (level - 1) & 1) path_b(level - 1, path, runtime);
  else path_a(level - 1, path, runtime);
  asm volatile("" ::: "memory");
}
__attribute__((noinline)) void path_b(int level, uint64_t path, bool runtime) {
  if (level == 0) return pair(runtime);
  if (path >> (level - 1) & 1) path_b(level - 1, path, runtime);
  else path_a(level - 1, path, runtime);
  asm volatile("" ::: "memory");
}
// Paths are numbered across repetitions and threads, so the timed ones are all new.
std::atomic<uint64_t> next_path{0};

struct Results {
  std::vector<double> rep_ns_call;  // per timed repetition
  std::vector<long long> pair_ns;   // per pair, with --latency
};

void timed_loop(const Options& o, Results& res) {
  for (int rep = -1; rep < o.reps; ++rep) {  // rep -1: warm-up, not kept
    const bool keep = rep >= 0;
    const auto t0 = Clock::now();
    if (o.latency && keep) {
      for (long i = 0; i < o.pairs; ++i) {
        const auto p0 = Clock::now();
        pair(o.runtime);
        res.pair_ns.push_back(ns_since(p0));
      }
    } else {
      if (o.unique) {
        const uint64_t first = next_path.fetch_add(uint64_t(o.pairs));
        // The innermost level takes the lowest bit (path_a): with a shallow
        // CUMEMTRACE_DEPTH the captured frames still differ as much as that depth allows.
        for (long i = 0; i < o.pairs; ++i) path_a(o.frames, first + uint64_t(i), o.runtime);
      } else {
        for (long i = 0; i < o.pairs; ++i) pair(o.runtime);
      }
    }
    const long long ns = ns_since(t0);
    if (keep) res.rep_ns_call.push_back(double(ns) / double(2 * o.pairs));
  }
}

// Nests `n` real frames before running the loop. The asm after the call keeps the
// compiler from turning the recursion into a tail call or a loop.
__attribute__((noinline)) int nest(int n, const Options& o, Results& res) {
  if (n == 0) {
    timed_loop(o, res);
    return 0;
  }
  int r = nest(n - 1, o, res);
  asm volatile("" : "+r"(r));
  return r + 1;
}

void make_current_context() {
  CHECK_CU(cuInit(0));
  CUdevice dev;
  CHECK_CU(cuDeviceGet(&dev, 0));
  CUcontext primary;
  CHECK_CU(cuDevicePrimaryCtxRetain(&primary, dev));
  CHECK_CU(cuCtxSetCurrent(primary));
}

double percentile(std::vector<long long>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * double(v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + long(k), v.end());
  return double(v[k]);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "alloc_loop: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--api") {
      const std::string v = value();
      if (v != "driver" && v != "runtime") {
        std::fprintf(stderr, "alloc_loop: --api driver|runtime\n");
        std::exit(2);
      }
      o.runtime = v == "runtime";
    } else if (a == "--frames") {
      o.frames = std::atoi(value());
    } else if (a == "--unique") {
      o.unique = true;
    } else if (a == "--threads") {
      o.threads = std::max(1, std::atoi(value()));
    } else if (a == "--live") {
      o.live = std::atol(value());
    } else if (a == "--pairs") {
      o.pairs = std::max(1L, std::atol(value()));
    } else if (a == "--reps") {
      o.reps = std::max(1, std::atoi(value()));
    } else if (a == "--latency") {
      o.latency = true;
    } else {
      std::fprintf(stderr,
                   "usage: alloc_loop [--api driver|runtime] [--frames N] [--unique] [--threads N] "
                   "[--live N] [--pairs N] [--reps N] [--latency]\n");
      std::exit(2);
    }
  }
  return o;
}

// Makes `n` live 512 B allocations (n >= 1; the first is `held`) and leaves a 512 B gap at
// the very start of the lowest 2 MiB page, where every timed pair then lands.
//
// Why so roundabout: the sim's small-allocation heap is first fit by a linear scan
// (sim/cuda/heap.cpp walks every block of every full page below the one it uses), so
// 100k allocations made in order take O(n^2) (~40 s here) and each later pair would
// scan all of them (~0.7 ms), measuring the sim instead of the tracer. Here each page
// below the one being filled holds just two blocks (a "spacer" page) while the pages
// are filled from the highest down, and the lowest page keeps its gap at offset 512, so
// a timed pair scans two blocks.
std::vector<CUdeviceptr> fill_live(long n, CUdeviceptr& held) {
  constexpr long kPerPage = (2 << 20) / 512;
  const long pages = (n + 1 + kPerPage - 1) / kPerPage;  // +1: the gap
  std::vector<CUdeviceptr> spacer(static_cast<size_t>(pages)), tail(static_cast<size_t>(pages));
  for (long k = 0; k < pages; ++k) {
    CHECK_CU(cuMemAlloc_v2(&spacer[size_t(k)], (2 << 20) - 512));
    CHECK_CU(cuMemAlloc_v2(&tail[size_t(k)], 512));
  }
  std::vector<CUdeviceptr> live;
  live.reserve(size_t(n));
  for (long k = pages - 1; k >= 0; --k) {
    CHECK_CU(cuMemFree_v2(tail[size_t(k)]));
    CHECK_CU(cuMemFree_v2(spacer[size_t(k)]));  // page k is empty now, and the lowest free one
    const long count = k > 0 ? kPerPage : n + 1 - (pages - 1) * kPerPage;
    for (long i = 0; i < count; ++i) {
      CUdeviceptr p;
      CHECK_CU(cuMemAlloc_v2(&p, 512));
      live.push_back(p);
    }
  }
  // The lowest page was filled last: its first block is `held`, its second makes the gap.
  const size_t first = size_t(n + 1 - (pages - 1) * kPerPage);
  const size_t lowest = live.size() - first;
  held = live[lowest];
  CHECK_CU(cuMemFree_v2(live[lowest + 1]));
  live.erase(live.begin() + long(lowest), live.begin() + long(lowest) + 2);
  return live;  // n - 1 others
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  make_current_context();
  if (o.runtime) CHECK_RT(cudaFree(nullptr));  // the runtime's one-time setup, untimed

  CUdeviceptr held;
  std::vector<CUdeviceptr> live;
  const auto f0 = Clock::now();
  if (o.live > 0) {
    live = fill_live(o.live, held);
  } else {
    CHECK_CU(cuMemAlloc_v2(&held, 512));
  }
  const double fill_s = double(ns_since(f0)) * 1e-9;

  Results res;
  res.pair_ns.reserve(o.latency ? size_t(o.pairs) * size_t(o.reps) : 0);
  if (o.threads > 1) {
    // Each thread runs its own repetitions; the figure is the wall time of all of them
    // (warm-up included) per call made by all threads.
    std::vector<Results> per(size_t(o.threads));
    std::vector<std::thread> pool;
    const auto t0 = Clock::now();
    for (auto& r : per)
      pool.emplace_back([&o, &r] {
        make_current_context();  // a context is current per thread
        o.unique ? timed_loop(o, r) : void(nest(o.frames, o, r));
      });
    for (auto& t : pool) t.join();
    const double calls = 2.0 * double(o.pairs) * double(o.reps + 1) * double(o.threads);
    res.rep_ns_call.assign(1, double(ns_since(t0)) / calls);
  } else if (o.unique) {
    timed_loop(o, res);  // the path itself is o.frames deep
  } else {
    nest(o.frames, o, res);
  }

  std::vector<double> reps = res.rep_ns_call;
  std::sort(reps.begin(), reps.end());
  std::printf("api=%s frames=%d unique=%d threads=%d live=%ld pairs=%ld reps=%d best_ns_call=%.1f median_ns_call=%.1f",
              o.runtime ? "runtime" : "driver", o.frames, int(o.unique), o.threads, o.live, o.pairs, o.reps,
              reps.front(), reps[reps.size() / 2]);
  if (o.live > 0) std::printf(" fill_s=%.2f", fill_s);
  if (o.latency) {
    std::printf(" pair_p50_ns=%.0f pair_p999_ns=%.0f pair_max_ns=%.0f", percentile(res.pair_ns, 0.5),
                percentile(res.pair_ns, 0.999), percentile(res.pair_ns, 1.0));
  }
  std::printf("\n");

  for (auto p : live) CHECK_CU(cuMemFree_v2(p));
  CHECK_CU(cuMemFree_v2(held));
  return 0;
}
