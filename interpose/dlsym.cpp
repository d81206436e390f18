// Our dlsym: the way into the driver for code that looks functions up instead of
// linking them (a static cudart, PyTorch's libraries, Triton, ...).
//
// Everything not ours must reach glibc's dlsym as if we were not here. glibc resolves
// RTLD_NEXT (and the namespace of RTLD_DEFAULT) relative to the *caller's* object,
// which it reads from the return address; so the forward must be a tail call, leaving
// the caller's return address in place. Getting this wrong is a known way to make
// `import torch` hang under CUDA interposers. This file is built with
// -fno-stack-protector and optimization so the compiler emits a jump, and
// test/interpose checks RTLD_NEXT through it.
#include <dlfcn.h>

#include "resolve.h"

extern "C" __attribute__((visibility("default"))) void* dlsym(void* handle, const char* name) {
  using namespace cumemtrace::interpose;
  if (void* ours = hooked_dlsym(handle, name)) return ours == kAbsent ? nullptr : ours;
  return real_dlsym()(handle, name);
}
