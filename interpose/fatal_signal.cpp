#include "fatal_signal.h"

#include <signal.h>

#include <cerrno>

#include "owner.h"
#include "writer.h"

namespace cumemtrace::interpose {
namespace {

constexpr int kFatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};

void on_fatal(int sig, siginfo_t*, void*) {
  const int saved_errno = errno;
  // A vfork child shares the parent's memory: its trace is not this process's to write.
  if (!in_borrowed_memory()) write_pending_in_signal_handler();
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  // `sig` is blocked while we run: it is delivered, now with SIG_DFL, as we return. A
  // fault the hardware raised would fault again anyway; a raise() or kill() would not.
  raise(sig);
  errno = saved_errno;
}

}  // namespace

void arm_fatal_signals() {
  const int saved_errno = errno;
  struct sigaction ours {};
  ours.sa_sigaction = on_fatal;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  for (int sig : kFatal) {
    struct sigaction now {};
    // Between the two calls a program thread could install its own handler, which ours
    // would then replace: a window of one system call, only while the disposition is
    // SIG_DFL. No interface sets a disposition only if it is still the default.
    if (sigaction(sig, nullptr, &now) == 0 && !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_DFL)
      sigaction(sig, &ours, nullptr);
  }
  errno = saved_errno;
}

}  // namespace cumemtrace::interpose
