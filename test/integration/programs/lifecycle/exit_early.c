/* One cudaMalloc, then the process ends at once, before the writer thread's first
   flush (argv[1] says how): _exit / _Exit (what multiprocessing children and DataLoader
   workers do), raise(SIGSEGV) / abort() / raise(SIGBUS), a real fault, SIGSEGV with the
   program's own handler installed after the allocation (it prints and _exits 3), or a
   vfork child whose exec fails and which then calls _exit(127) (the parent allocates
   once more and returns normally). */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void handler(int sig) {
  (void)sig;
  static const char msg[] = "program's handler ran\n";
  if (write(1, msg, sizeof msg - 1) < 0) _exit(4);
  _exit(3);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const char* how = argv[1];
  void* p = NULL;
  if (cudaMalloc(&p, 1 << 20)) return 5;
  if (!strcmp(how, "_exit")) _exit(0);
  if (!strcmp(how, "_Exit")) _Exit(0);
  if (!strcmp(how, "segv")) raise(SIGSEGV);
  if (!strcmp(how, "abort")) abort();
  if (!strcmp(how, "bus")) raise(SIGBUS);
  if (!strcmp(how, "fault")) *(volatile int*)(uintptr_t)8 = 1;
  if (!strcmp(how, "handler")) {
    signal(SIGSEGV, handler);
    raise(SIGSEGV);
  }
  if (!strcmp(how, "vfork")) {
    char* args[] = {"absent", NULL};
    const pid_t pid = vfork();
    if (pid == 0) {
      execv("/nonexistent/absent", args);
      _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return 6;
    void* q = NULL;
    if (cudaMalloc(&q, 2 << 20)) return 7;
    printf("child exited %d\n", WEXITSTATUS(status));
    return 0;
  }
  return 9;
}
