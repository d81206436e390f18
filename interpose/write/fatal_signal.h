// SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL kill a process before our destructor
// could flush: up to 100 ms of events (all of them, for a process that crashes soon
// after its first CUDA call) would be lost. Where the program left such a signal at
// SIG_DFL, a handler of ours writes what is pending (track/writer_thread.h:
// flush_in_signal_handler, async-signal-safe), puts SIG_DFL back and re-raises,
// so the process dies of the same signal, with its core dump.
//
// The program's view is its own: our sigaction() and signal() hooks show it the
// disposition it set (SIG_DFL while ours stands in for it), and a SIG_DFL it sets keeps
// ours beneath, as it does the same. A handler or SIG_IGN of the program's is installed
// exactly as given and never replaced; ours returns only when the program sets SIG_DFL
// again. (bsd_signal, sysv_signal, sigset and raw system calls pass by our hooks: a
// SIG_DFL set that way is taken back by ours at the next writer tick, and a program
// asking through sigaction() is shown SIG_DFL.)
#pragma once

#include <signal.h>

namespace cumemtrace::interpose {

// Installs our handler for each of those signals still at SIG_DFL. Called when tracing
// starts and on every writer tick (a SIG_DFL set past our hooks).
void arm_fatal_signals();

// In a forked child: the view's lock may have been held by a thread that is not there.
void fatal_signals_after_fork_child();

// sigaction() as the program sees it (the exported hook).
int program_sigaction(int sig, const struct sigaction* act, struct sigaction* old);

}  // namespace cumemtrace::interpose
