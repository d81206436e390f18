// The trampoline the __libc_start_main hook hands libc in place of main (hooks_start.h).
#include "hooks/hooks_start.h"

#include "track/trace_sink.h"

extern "C" {
__attribute__((visibility("hidden"))) cumemtrace::interpose::ProgramMain cumemtrace_program_main = nullptr;
__attribute__((visibility("hidden"), used)) void cumemtrace_main_starts() { cumemtrace::interpose::on_main_start(); }
}

// Entered as main is (rsp 8 mod 16): keeps main's three arguments across the call (three
// pushes make rsp 0 mod 16 for it), then jumps to main with the stack as it found it.
__asm__(R"(
  .text
  .p2align 4
  .globl cumemtrace_main_trampoline
  .hidden cumemtrace_main_trampoline
  .type cumemtrace_main_trampoline, @function
cumemtrace_main_trampoline:
  .cfi_startproc
  endbr64
  pushq %rdi
  .cfi_adjust_cfa_offset 8
  pushq %rsi
  .cfi_adjust_cfa_offset 8
  pushq %rdx
  .cfi_adjust_cfa_offset 8
  call cumemtrace_main_starts
  popq %rdx
  .cfi_adjust_cfa_offset -8
  popq %rsi
  .cfi_adjust_cfa_offset -8
  popq %rdi
  .cfi_adjust_cfa_offset -8
  jmp *cumemtrace_program_main(%rip)
  .cfi_endproc
  .size cumemtrace_main_trampoline, .-cumemtrace_main_trampoline
)");
