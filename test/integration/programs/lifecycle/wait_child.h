/* A fork child waited for with a time limit, for the fork programs here: the parent
   sleeps in sigtimedwait until SIGCHLD comes, so a child is reaped the moment it ends
   and the run takes what the children take (a poll would add its period to each of
   hundreds of children). The caller blocks SIGCHLD in every thread first (before it starts
   any): the signal then stays pending until it is waited for, never lost between the
   check and the wait. */
#ifndef CUMEMTRACE_TEST_WAIT_CHILD_H
#define CUMEMTRACE_TEST_WAIT_CHILD_H
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

static void block_sigchld(void) {
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
}

/* 1 when child `pid` ended (reaped) within `seconds`, 0 when it still runs then. */
static int wait_child(pid_t pid, int seconds) {
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += seconds;
  for (;;) {
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) return 1;
    struct timespec now, left;
    clock_gettime(CLOCK_MONOTONIC, &now);
    left.tv_sec = deadline.tv_sec - now.tv_sec;
    left.tv_nsec = deadline.tv_nsec - now.tv_nsec;
    if (left.tv_nsec < 0) {
      left.tv_nsec += 1000000000L;
      left.tv_sec -= 1;
    }
    if (left.tv_sec < 0) return 0;
    /* Returns at SIGCHLD (of this child or another), at the limit, or on EINTR. */
    if (sigtimedwait(&chld, NULL, &left) < 0 && errno != EAGAIN && errno != EINTR) return 0;
  }
}
#endif
