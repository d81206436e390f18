#include "base/thread_state.h"

#include <sys/syscall.h>
#include <unistd.h>

namespace cumemtrace::interpose {

// initial-exec: a preloaded library gets static TLS, and this keeps every access a
// plain offset from the thread pointer (no __tls_get_addr, no allocation).
static __thread ThreadState t_state __attribute__((tls_model("initial-exec")));

ThreadState& thread_state() {
  if (!t_state.tid) t_state.tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return t_state;
}

// A forked child's thread keeps the parent's cached tid otherwise.
void reset_thread_state_after_fork() { t_state = ThreadState{}; }

}  // namespace cumemtrace::interpose
