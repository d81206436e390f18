/* What a program sees of its fatal-signal dispositions after its first CUDA call, and
   that what it sets is what it gets: a handler of its own, SIG_DFL again (kept while the
   writer ticks: CUMEMTRACE_FLUSH_MS=1 in the test), flags as set, SIG_IGN. Prints each
   view, then raises SIGSEGV under the SIG_DFL it set and dies of it. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static void handler(int sig) { (void)sig; }

static const char* view(int sig) {
  struct sigaction sa;
  if (sigaction(sig, NULL, &sa)) return "error";
  if (sa.sa_handler == SIG_DFL) return "default";
  if (sa.sa_handler == SIG_IGN) return "ignored";
  if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == handler) return "program's";
  return "foreign";
}

int main(void) {
  void* p = NULL;
  if (cudaMalloc(&p, 1 << 20)) return 5;
  usleep(200 * 1000);  // writer ticks: each one arms ours where the disposition is SIG_DFL
  printf("after CUDA: %s %s %s %s %s\n", view(SIGSEGV), view(SIGBUS), view(SIGABRT), view(SIGFPE), view(SIGILL));
  sighandler_t was = signal(SIGSEGV, handler);
  printf("signal gave %s, now %s\n", was == SIG_DFL ? "SIG_DFL" : "another", view(SIGSEGV));
  usleep(200 * 1000);
  printf("later %s\n", view(SIGSEGV));
  was = signal(SIGSEGV, SIG_DFL);
  printf("signal gave %s, now %s\n", was == handler ? "the handler" : "another", view(SIGSEGV));
  usleep(200 * 1000);
  printf("later %s\n", view(SIGSEGV));
  struct sigaction set = {0}, old, now;
  set.sa_handler = SIG_DFL;
  set.sa_flags = SA_NODEFER | SA_RESTART;
  sigaddset(&set.sa_mask, SIGUSR1);
  sigaction(SIGBUS, &set, &old);
  sigaction(SIGBUS, NULL, &now);
  printf("SIGBUS was %s, flags %#x, mask has SIGUSR1 %d\n", old.sa_handler == SIG_DFL ? "default" : "another",
         (unsigned)now.sa_flags, sigismember(&now.sa_mask, SIGUSR1));
  struct sigaction ign = {0};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGFPE, &ign, NULL);
  usleep(200 * 1000);
  printf("SIGFPE %s\n", view(SIGFPE));
  fflush(stdout);
  raise(SIGSEGV);
  return 8;
}
