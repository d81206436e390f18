// Our dlsym: the way into the driver for code that looks functions up instead of
// linking them (a static cudart, PyTorch's libraries, Triton, ...).
//
// Everything not ours must reach glibc's dlsym as if we were not here. glibc resolves
// RTLD_NEXT (and the namespace of RTLD_DEFAULT) relative to the *caller's* object,
// which it reads from the return address; so the forward must be a tail call, leaving
// the caller's return address in place. Getting this wrong is a known way to make
// `import torch` hang under CUDA interposers. This file is built with
// -fno-stack-protector and optimization so the compiler emits a jump, and
// test/integration checks RTLD_NEXT through it. In sanitizer builds this file is not
// instrumented: the sanitizer runtime's own start-up calls dlsym(RTLD_NEXT, ...) before
// it can check memory, and everything that path runs lives here.
#include <dlfcn.h>

#include <atomic>

#include "resolve/resolve.h"

namespace cumemtrace::interpose {

namespace {
// Not a function-local static: its guard (__cxa_guard_acquire) is intercepted by
// ThreadSanitizer, whose start-up calls this dlsym before that interceptor can run.
// Threads racing to the first call find the same answer.
std::atomic<DlsymFn> g_real_dlsym{nullptr};
}  // namespace

DlsymFn real_dlsym() {
  if (DlsymFn fn = g_real_dlsym.load(std::memory_order_acquire)) return fn;
  // dlvsym is not hooked, so this cannot recurse into our dlsym.
  auto f = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
  if (!f) f = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));
  g_real_dlsym.store(f, std::memory_order_release);
  return f;
}

}  // namespace cumemtrace::interpose

extern "C" __attribute__((visibility("default"))) void* dlsym(void* handle, const char* name) {
  using namespace cumemtrace::interpose;
  if (maybe_tracked(handle, name))
    if (void* ours = hooked_dlsym(handle, name)) {
      if (ours != kAbsent) return ours;
      note_absent_lookup(__builtin_return_address(0));  // dlerror() names the program, not us
      return nullptr;
    }
  return real_dlsym()(handle, name);
}
