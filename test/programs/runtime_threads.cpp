// N threads allocating and freeing at once. Addresses depend on the
// interleaving, so this prints counts only: each thread does kPairs
// malloc/free pairs of mixed sizes, then leaves exactly one 4 KiB block live.
#include "runtime_common.h"

#include <thread>
#include <vector>

namespace {
constexpr int kPairs = 100;
constexpr size_t kSizes[] = {512, 4096, 1 << 20, 3 << 20, 100};

void worker() {
  for (int i = 0; i < kPairs; ++i) {
    void* p;
    CHECK_RT(cudaMalloc(&p, kSizes[i % 5]));
    CHECK_RT(cudaFree(p));
  }
  void* live;
  CHECK_RT(cudaMalloc(&live, 4096));
}
}  // namespace

int scenario_threads(int threads) {
  if (threads < 1) threads = 1;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  std::printf("threads %d pairs %d live %d bytes %d\n", threads, kPairs, threads, threads * 4096);
  return 0;
}
