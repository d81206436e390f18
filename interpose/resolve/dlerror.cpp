// dlerror() as the program would read it without us. When dlsym(RTLD_DEFAULT, name) finds
// no definition but our own export, our dlsym asks for the next one (resolve.h: kAbsent),
// and glibc's message then names the object that asked: "…/libcumemtrace.so: undefined
// symbol: cudaMalloc", where the program's own lookup names the program. The hook puts the
// caller's name back in its place, for that one message, in that thread.
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "resolve/resolve.h"

namespace cumemtrace::interpose {
namespace {

using DlerrorFn = char* (*)();
// Resolved at load: a successful dlsym clears the message a later dlerror() must read.
std::atomic<DlerrorFn> g_real_dlerror{nullptr};

__attribute__((constructor)) void resolve_dlerror() {
  g_real_dlerror.store(reinterpret_cast<DlerrorFn>(real_dlsym()(RTLD_NEXT, "dlerror")), std::memory_order_release);
}

// The caller of the last absent lookup in this thread, and the message as it should read.
thread_local bool t_pending;
thread_local char t_caller[512];
thread_local char t_message[1024];

}  // namespace

void note_absent_lookup(const void* caller) {
  Dl_info info{};
  t_pending = dladdr(caller, &info) && info.dli_fname && *info.dli_fname;
  if (t_pending) std::snprintf(t_caller, sizeof t_caller, "%s", info.dli_fname);
}

}  // namespace cumemtrace::interpose

extern "C" __attribute__((visibility("default"))) char* dlerror() {
  using namespace cumemtrace::interpose;
  const DlerrorFn real = g_real_dlerror.load(std::memory_order_acquire);
  char* message = real ? real() : nullptr;
  if (!t_pending) return message;
  t_pending = false;
  Dl_info self{};
  if (!message || !dladdr(reinterpret_cast<const void*>(&note_absent_lookup), &self) || !self.dli_fname) return message;
  const size_t ours = std::strlen(self.dli_fname);
  if (std::strncmp(message, self.dli_fname, ours) != 0 || std::strncmp(message + ours, ": ", 2) != 0) return message;
  std::snprintf(t_message, sizeof t_message, "%s%s", t_caller, message + ours);
  return t_message;
}
