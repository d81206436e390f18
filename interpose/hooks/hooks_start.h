// Body of the __libc_start_main hook: it hands libc a trampoline in place of main, which
// tells the library that main begins (track/trace_sink.h: on_main_start) and then jumps to
// main, so that main's frame is the one its caller made (no frame of ours under main in any
// stack) and main returns straight to libc. x86-64 only, as the library is.
#pragma once

#include "hook_ids.h"

namespace cumemtrace::interpose {

using ProgramMain = int (*)(int, char**, char**);

}  // namespace cumemtrace::interpose

extern "C" {
// The program's main, and the trampoline that stands in for it (start_main.cpp).
extern __attribute__((visibility("hidden"))) cumemtrace::interpose::ProgramMain cumemtrace_program_main;
__attribute__((visibility("hidden"))) int cumemtrace_main_trampoline(int, char**, char**);
}

namespace cumemtrace::interpose {

inline int on_start_main(HookId, auto real, ProgramMain main, int argc, char** argv, void (*init)(void),
                         void (*fini)(void), void (*rtld_fini)(void), void* stack_end) {
  if (!main) return real(main, argc, argv, init, fini, rtld_fini, stack_end);
  cumemtrace_program_main = main;
  return real(cumemtrace_main_trampoline, argc, argv, init, fini, rtld_fini, stack_end);
}

}  // namespace cumemtrace::interpose
