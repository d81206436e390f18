/* Allocates, starts /bin/true in the middle (vfork + execl, posix_spawn, or clone with
   CLONE_VM|CLONE_VFORK, as argv[1] says), then allocates five more times and frees the
   first. The child shares the parent's memory until it execs: whatever the tracer's
   exec hook does there, it does to the parent's trace. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static int exec_true(void* unused) {
  (void)unused;
  execl("/bin/true", "true", (char*)NULL);
  _exit(127);
}

static pid_t start(const char* how) {
  if (strcmp(how, "vfork") == 0) {
    pid_t pid = vfork();
    if (pid == 0) exec_true(NULL);
    return pid;
  }
  if (strcmp(how, "posix_spawn") == 0) {
    char* argv[] = {"true", NULL};
    pid_t pid;
    return posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) == 0 ? pid : -1;
  }
  static char stack[64 * 1024];
  return clone(exec_true, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  void *first = NULL, *p[5];
  if (cudaMalloc(&first, 1 << 20)) return 3;
  const pid_t pid = start(argv[1]);
  int status = -1;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return 4;
  for (int i = 0; i < 5; ++i)
    if (cudaMalloc(&p[i], 2 << 20)) return 5;
  if (cudaFree(first)) return 6;
  printf("%s: child exited %d, 6 allocations, 1 free\n", argv[1], WEXITSTATUS(status));
  return WEXITSTATUS(status);
}
