// Bodies of the exec hooks: end the trace with an End record that names the program the
// exec runs (trace_format.h: EndReason::kExec), write what is pending, then exec
// (track/writer_thread.h: flush_before_exec). In a vfork child the trace is the parent's,
// which goes on: nothing to flush, nothing to touch.
#pragma once

#include <fcntl.h>
#include <limits.h>

#include <string_view>

#include "hook_ids.h"
#include "base/owner.h"
#include "track/writer_thread.h"

namespace cumemtrace::interpose {

// What execveat(dirfd, path, ..., flags) runs, for the End record: `path` itself when it
// is absolute or relative to the working directory, else the name /proc gives `dirfd`
// (followed by "/path" unless AT_EMPTY_PATH with an empty path). Written into `buf`; no
// heap, no errno change. A name /proc cannot give reads "fd N".
std::string_view exec_target(int dirfd, const char* path, int flags, char (&buf)[PATH_MAX + 32]);

int on_exec(HookId, auto real, const char* path, auto... rest) {
  if (!in_borrowed_memory()) flush_before_exec(path ? path : "");
  return real(path, rest...);
}

int on_execveat(HookId, auto real, int dirfd, const char* path, char* const* argv, char* const* envp, int flags) {
  if (!in_borrowed_memory()) {
    char buf[PATH_MAX + 32];
    flush_before_exec(exec_target(dirfd, path, flags, buf));
  }
  return real(dirfd, path, argv, envp, flags);
}

int on_fexecve(HookId, auto real, int fd, char* const* argv, char* const* envp) {
  if (!in_borrowed_memory()) {
    char buf[PATH_MAX + 32];
    flush_before_exec(exec_target(fd, "", AT_EMPTY_PATH, buf));
  }
  return real(fd, argv, envp);
}

}  // namespace cumemtrace::interpose
