// A single-threaded program forks repeatedly; each child makes one CUDA call and exits.
// Under the preload a child can deadlock forever in dl_iterate_phdr (libunwind, from
// capture_stack) when the fork happened while the writer thread was inside
// dl_iterate_phdr (ModuleScanner::scan_if_changed). Exit status 1 if a child hung.
#include <cuda_runtime_api.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wait_child.h"
int main(int argc, char** argv) {
  int forks = argc > 1 ? atoi(argv[1]) : 1500, hung = 0;
  cudaFree(0);
  block_sigchld();
  for (int f = 0; f < forks; f++) {
    pid_t pid = fork();
    if (pid == 0) {
      void* p;
      (void)cudaMalloc(&p, 1024);
      _exit(0);
    }
    if (!wait_child(pid, 5)) {
      /* Where it hangs, for the test's failure message: every thread's stack by gdb when
         there is one, and each thread's kernel wait channel. */
      char cmd[512];
      snprintf(cmd, sizeof cmd,
               "command -v gdb >/dev/null && gdb -p %d -batch -nx -ex 'thread apply all bt' 2>&1 | grep -E "
               "'^(Thread|#)' >&2;"
               " for t in /proc/%d/task/*; do echo \"$t $(cat $t/wchan) $(cut -d' ' -f1 $t/syscall)\" >&2; done",
               pid, pid);
      fprintf(stderr, "child %d hung\n", pid);
      fflush(stderr);
      if (system(cmd) == -1) fprintf(stderr, "cannot look at child %d\n", pid);
      hung++;
      kill(pid, SIGKILL);
      waitpid(pid, NULL, 0);
    }
  }
  printf("%d of %d children hung\n", hung, forks);
  return hung != 0;
}
