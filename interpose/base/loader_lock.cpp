#include "base/loader_lock.h"

#include <atomic>

namespace cumemtrace::interpose {
namespace {

// Writer-preferring: fork must not wait behind an endless stream of unwinding hooks.
pthread_rwlock_t g_loader_use = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

// Sections this thread has open. Only the outermost takes the lock: a second read lock
// of a writer-preferring rwlock waits behind a fork that waits for the first one.
__thread int t_open __attribute__((tls_model("initial-exec")));

std::atomic<int> g_foreign{0};   // ForeignCalls running now, in any thread
bool g_foreign_at_fork = false;  // read by the forking thread while it holds the lock
bool g_unusable = false;

}  // namespace

LoaderUse::LoaderUse() {
  if (t_open++ == 0) pthread_rwlock_rdlock(&g_loader_use);
}
LoaderUse::~LoaderUse() {
  if (--t_open == 0) pthread_rwlock_unlock(&g_loader_use);
}

// Counted under the lock, so a fork in progress either saw this call or holds it back.
ForeignCall::ForeignCall() {
  const LoaderUse counted;
  g_foreign.fetch_add(1, std::memory_order_seq_cst);
}
ForeignCall::~ForeignCall() { g_foreign.fetch_sub(1, std::memory_order_seq_cst); }

bool loader_usable() { return !g_unusable; }

void loader_prepare_fork() {
  pthread_rwlock_wrlock(&g_loader_use);
  g_foreign_at_fork = g_foreign.load(std::memory_order_seq_cst) > 0;
}
void loader_after_fork_parent() { pthread_rwlock_unlock(&g_loader_use); }

// Not an unlock: glibc's rwlock remembers its writer by thread id, which is new in the
// child, so an unlock there is taken for a reader's and leaves the lock stuck (every
// child hung on its first unwind). The child has one thread: start the lock afresh.
void loader_after_fork_child() {
  pthread_rwlock_t fresh = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
  g_loader_use = fresh;
  t_open = 0;
  g_unusable = g_unusable || g_foreign_at_fork;
  g_foreign.store(0, std::memory_order_relaxed);
}

}  // namespace cumemtrace::interpose
