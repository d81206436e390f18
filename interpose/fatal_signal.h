// SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL kill a process before our destructor
// could flush: up to 100 ms of events (all of them, for a process that crashes soon
// after its first CUDA call) would be lost. Where the program left such a signal at
// SIG_DFL, a handler of ours writes what is pending (writer.h:
// write_pending_in_signal_handler, async-signal-safe), puts SIG_DFL back and re-raises,
// so the process dies of the same signal, with its core dump. A handler of the
// program's is never replaced: ours goes only where the disposition is SIG_DFL, and a
// handler the program installs later simply replaces ours.
#pragma once

namespace cumemtrace::interpose {

// Installs our handler for each of those signals still at SIG_DFL. Called when tracing
// starts and on every writer tick (the program may have put SIG_DFL back).
void arm_fatal_signals();

}  // namespace cumemtrace::interpose
