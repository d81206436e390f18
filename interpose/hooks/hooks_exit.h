// Body of the _exit/_Exit hooks. They end the process without destructors, so our
// on_unload never runs: finish the trace here (exit snapshot, EndRecord, final flush,
// bounded like the destructor's), then exit. A vfork child that calls _exit (after a
// failed exec, say) runs in its parent's memory: the trace, the writer and their locks
// are the parent's, so it touches nothing and only exits (owner.h).
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include "hook_ids.h"
#include "base/owner.h"
#include "track/writer_thread.h"

namespace cumemtrace::interpose {

[[noreturn]] inline void exit_without_libc() {
  for (;;) syscall(SYS_exit_group, 127);
}

[[noreturn]] void on_exit_now(HookId, auto real, int status) {
  if (!in_borrowed_memory()) {
    note_exit_status(status);
    finish_trace();
  }
  real(status);
  exit_without_libc();  // a real _exit returns only if it is not one
}

}  // namespace cumemtrace::interpose
