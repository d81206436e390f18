// Keeps errno as it was: our own bookkeeping (dlopen, NVML, files) must never change what
// the program sees after a hooked call.
#pragma once

#include <cerrno>

namespace cumemtrace::interpose {

struct ErrnoGuard {
  int saved = errno;
  ~ErrnoGuard() { errno = saved; }
};

}  // namespace cumemtrace::interpose
