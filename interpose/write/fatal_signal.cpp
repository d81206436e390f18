#include "write/fatal_signal.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <atomic>
#include <cerrno>

#include "base/owner.h"
#include "resolve/resolve.h"
#include "track/writer_thread.h"

namespace cumemtrace::interpose {
namespace {

constexpr int kFatal[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};

bool is_fatal(int sig) {
  for (int s : kFatal)
    if (s == sig) return true;
  return false;
}

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);
using SignalFn = sighandler_t (*)(int, sighandler_t);

// The next definitions after ours (libc's, or a sanitizer's interceptor). Ours must never
// call the `sigaction` symbol: it is our own hook.
std::atomic<SigactionFn> g_real_sigaction{nullptr};
std::atomic<SignalFn> g_real_signal{nullptr};

template <class Fn>
Fn next_definition(std::atomic<Fn>& cache, const char* name) {
  if (Fn fn = cache.load(std::memory_order_acquire)) return fn;
  auto fn = reinterpret_cast<Fn>(real_dlsym()(RTLD_NEXT, name));
  cache.store(fn, std::memory_order_release);
  return fn;
}
SigactionFn real_sigaction() { return next_definition(g_real_sigaction, "sigaction"); }

// What the program sees of a fatal signal while our handler is the kernel's disposition:
// the SIG_DFL it last set (or found). Only SIG_DFL: a handler or SIG_IGN of the program's
// is installed as given, and ours is gone for that signal until the program sets SIG_DFL.
struct View {
  bool ours = false;
  struct sigaction program {};
};
View g_view[NSIG];
std::atomic<bool> g_armed{false};
std::atomic_flag g_view_lock = ATOMIC_FLAG_INIT;

// With every signal blocked, so that a handler calling sigaction cannot find the lock
// held by the thread it interrupted.
class ViewLock {
 public:
  ViewLock() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved_);
    while (g_view_lock.test_and_set(std::memory_order_acquire)) sched_yield();
  }
  ~ViewLock() {
    g_view_lock.clear(std::memory_order_release);
    pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }

 private:
  sigset_t saved_;
};

void on_fatal(int sig, siginfo_t*, void*) {
  const int saved_errno = errno;
  // A vfork child shares the parent's memory: its trace is not this process's to write.
  if (!in_borrowed_memory()) flush_in_signal_handler();
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  if (SigactionFn real = g_real_sigaction.load(std::memory_order_acquire)) real(sig, &dfl, nullptr);
  // `sig` is blocked while we run: it is delivered, now with SIG_DFL, as we return. A
  // fault the hardware raised would fault again anyway; a raise() or kill() would not.
  raise(sig);
  errno = saved_errno;
}

bool is_ours(const struct sigaction& a) { return (a.sa_flags & SA_SIGINFO) && a.sa_sigaction == on_fatal; }

struct sigaction our_action() {
  struct sigaction ours {};
  ours.sa_sigaction = on_fatal;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  return ours;
}

}  // namespace

void arm_fatal_signals() {
  const int saved_errno = errno;
  const SigactionFn real = real_sigaction();
  if (!real) return;
  const struct sigaction ours = our_action();
  g_armed.store(true, std::memory_order_release);
  for (int sig : kFatal) {
    // Under the view's lock: a program thread's sigaction through our hook waits, so ours
    // never replaces a handler installed between the two calls.
    const ViewLock lock;
    View& v = g_view[sig];
    struct sigaction now {};
    if (real(sig, nullptr, &now) != 0 || is_ours(now)) continue;
    // Not ours, and not SIG_DFL: set past our hook (a raw system call); it stays.
    v.ours = false;
    if (now.sa_handler != SIG_DFL) continue;
    v.program = now;
    v.ours = real(sig, &ours, nullptr) == 0;
  }
  errno = saved_errno;
}

void fatal_signals_after_fork_child() { g_view_lock.clear(std::memory_order_release); }

int program_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
  const SigactionFn real = real_sigaction();
  if (!real) {
    errno = ENOSYS;
    return -1;
  }
  // A vfork child's dispositions are its own, its view (in our memory) its parent's.
  if (!is_fatal(sig) || !g_armed.load(std::memory_order_acquire) || in_borrowed_memory()) return real(sig, act, old);
  const ViewLock lock;
  View& v = g_view[sig];
  if (!v.ours && (!act || act->sa_handler != SIG_DFL)) return real(sig, act, old);
  struct sigaction was {};
  if (v.ours) {
    was = v.program;
  } else if (real(sig, nullptr, &was) != 0) {
    return -1;
  }
  if (act) {
    // Installed as given, so that the view is the kernel's own copy of it (glibc adds
    // SA_RESTORER, for one). A handler or SIG_IGN stays; SIG_DFL gets ours in its place,
    // which does the same after writing the trace.
    if (real(sig, act, nullptr) != 0) return -1;
    v.ours = false;
    if (act->sa_handler == SIG_DFL) {
      const struct sigaction ours = our_action();
      struct sigaction set {};
      if (real(sig, &ours, &set) == 0) v.program = set, v.ours = true;
    }
  }
  if (old) *old = was;
  return 0;
}

}  // namespace cumemtrace::interpose

using namespace cumemtrace::interpose;

extern "C" __attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction* act,
                                                                struct sigaction* old) {
  return program_sigaction(sig, act, old);
}

// glibc's signal() is BSD's: the handler's own signal blocked while it runs, SA_RESTART.
extern "C" __attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t handler) {
  if (!is_fatal(sig) || !g_armed.load(std::memory_order_acquire)) {
    const SignalFn real = next_definition(g_real_signal, "signal");
    if (!real) {
      errno = ENOSYS;
      return SIG_ERR;
    }
    return real(sig, handler);
  }
  struct sigaction act {
  }, old{};
  act.sa_handler = handler;
  sigemptyset(&act.sa_mask);
  sigaddset(&act.sa_mask, sig);
  act.sa_flags = SA_RESTART;
  return program_sigaction(sig, &act, &old) == 0 ? old.sa_handler : SIG_ERR;
}
