#include "loader_lock.h"

namespace cumemtrace::interpose {
namespace {

// Writer-preferring: fork must not wait behind an endless stream of unwinding hooks.
pthread_rwlock_t g_loader_use = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

}  // namespace

LoaderUse::LoaderUse() { pthread_rwlock_rdlock(&g_loader_use); }
LoaderUse::~LoaderUse() { pthread_rwlock_unlock(&g_loader_use); }

void loader_prepare_fork() { pthread_rwlock_wrlock(&g_loader_use); }
void loader_after_fork_parent() { pthread_rwlock_unlock(&g_loader_use); }

// Not an unlock: glibc's rwlock remembers its writer by thread id, which is new in the
// child, so an unlock there is taken for a reader's and leaves the lock stuck (every
// child hung on its first unwind). The child has one thread: start the lock afresh.
void loader_after_fork_child() {
  pthread_rwlock_t fresh = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
  g_loader_use = fresh;
}

}  // namespace cumemtrace::interpose
