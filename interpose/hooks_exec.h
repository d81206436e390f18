// Body of the exec hooks: flush the trace, then exec (writer.h: flush_before_exec).
#pragma once

#include "hook_ids.h"
#include "writer.h"

namespace cumemtrace::interpose {

int on_exec(HookId, auto real, auto... args) {
  flush_before_exec();
  return real(args...);
}

}  // namespace cumemtrace::interpose
