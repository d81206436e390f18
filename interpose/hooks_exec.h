// Body of the exec hooks: flush the trace, then exec (writer.h: flush_before_exec). In a
// vfork child the trace is the parent's, which goes on: nothing to flush, nothing to touch.
#pragma once

#include "hook_ids.h"
#include "owner.h"
#include "writer.h"

namespace cumemtrace::interpose {

int on_exec(HookId, auto real, auto... args) {
  if (!in_borrowed_memory()) flush_before_exec();
  return real(args...);
}

}  // namespace cumemtrace::interpose
