#include "probe/stream_capture.h"

#include <cuda.h>
#include <sched.h>

#include <atomic>

#include "base/log.h"
#include "base/thread_state.h"

namespace cumemtrace::interpose {
namespace {

// Dekker's handshake between OwnCudaCalls and a beginning capture: each side announces
// itself, then looks at the other (sequentially consistent), so at least one of them sees
// the other and steps back — the query by not calling, the begin by waiting.
std::atomic<int> g_beginning{0};
std::atomic<int> g_open{0};
std::atomic<int> g_own_calls{0};

// The capturing streams. Begin and end are rare: a spinlock (resettable after fork)
// guards a fixed table. More than kMax concurrent captures keep g_open above zero for
// good, which only errs on the safe side.
constexpr int kMax = 256;
std::atomic<bool> g_lock{false};
uint64_t g_streams[kMax];
int g_count = 0;
int g_untracked = 0;

struct Locked {
  Locked() {
    while (g_lock.exchange(true, std::memory_order_acquire)) sched_yield();
  }
  ~Locked() { g_lock.store(false, std::memory_order_release); }
};

// CU_STREAM_PER_THREAD names a different stream on every thread.
uint64_t key(uint64_t stream) {
  return stream == reinterpret_cast<uint64_t>(CU_STREAM_PER_THREAD) ? uint64_t(thread_state().tid) << 8 | stream
                                                                    : stream;
}

int find(uint64_t k) {
  for (int i = 0; i < g_count; ++i)
    if (g_streams[i] == k) return i;
  return -1;
}

void publish() { g_open.store(g_count + g_untracked, std::memory_order_seq_cst); }

}  // namespace

OwnCudaCalls::OwnCudaCalls() {
  g_own_calls.fetch_add(1, std::memory_order_seq_cst);
  allowed_ = g_beginning.load(std::memory_order_seq_cst) == 0 && g_open.load(std::memory_order_seq_cst) == 0;
  if (!allowed_) g_own_calls.fetch_sub(1, std::memory_order_seq_cst);
}

OwnCudaCalls::~OwnCudaCalls() {
  if (allowed_) g_own_calls.fetch_sub(1, std::memory_order_seq_cst);
}

bool capture_open() { return g_open.load(std::memory_order_relaxed) != 0; }

bool stream_capturing(uint64_t stream) {
  if (!capture_open()) return false;
  const Locked lock;
  return find(key(stream)) >= 0;
}

void capture_begin_before() {
  g_beginning.fetch_add(1, std::memory_order_seq_cst);
  while (g_own_calls.load(std::memory_order_seq_cst) != 0) sched_yield();
}

void capture_begin_after(uint64_t stream, bool succeeded) {
  if (succeeded) {
    const Locked lock;
    const uint64_t k = key(stream);
    if (find(k) < 0) {
      if (g_count < kMax) {
        g_streams[g_count++] = k;
      } else if (g_untracked++ == 0) {
        log_warn("more than {} concurrent stream captures: the tracer makes no CUDA call of its own from now on", kMax);
      }
    }
    publish();
  }
  g_beginning.fetch_sub(1, std::memory_order_seq_cst);
}

void capture_end_after(uint64_t stream, bool ended) {
  if (!ended) return;
  const Locked lock;
  const int i = find(key(stream));
  if (i < 0) return;
  g_streams[i] = g_streams[--g_count];
  publish();
}

void capture_after_fork_child() {
  g_lock.store(false, std::memory_order_relaxed);
  g_count = g_untracked = 0;
  g_beginning.store(0);
  g_own_calls.store(0);
  g_open.store(0);
}

}  // namespace cumemtrace::interpose
