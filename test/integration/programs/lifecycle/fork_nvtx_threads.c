/* A worker thread opens and ends NVTX ranges without pause while the main thread forks;
   each child opens a range of its own, makes one CUDA allocation and exits. A child made
   while the worker was inside the tracer's NVTX bookkeeping inherited its lock held by a
   thread the child does not have, and hung on its first range. Prints how many of the
   children hung (over 3 s); exit status 1 if any did. */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wait_child.h"

static int g_stop; /* read and written with __atomic builtins */

static void* worker(void* arg) {
  (void)arg;
  while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED))
    nvtxRangeEnd(nvtxRangeStartA("a worker's range with a name long enough to be copied"));
  return NULL;
}

int main(int argc, char** argv) {
  int forks = argc > 1 ? atoi(argv[1]) : 200, hung = 0;
  if (cudaFree(0)) return 2;
  nvtxRangeEnd(nvtxRangeStartA("before the worker"));
  block_sigchld(); /* before the worker starts, which inherits the mask */
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL)) return 2;
  for (int f = 0; f < forks; f++) {
    pid_t pid = fork();
    if (pid == 0) {
      void* p;
      nvtxRangeId_t r = nvtxRangeStartA("child");
      (void)cudaMalloc(&p, 1024);
      nvtxRangeEnd(r);
      _exit(0);
    }
    if (!wait_child(pid, 3)) {
      fprintf(stderr, "child %d hung\n", pid);
      hung++;
      kill(pid, SIGKILL);
      waitpid(pid, NULL, 0);
    }
  }
  __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
  pthread_join(t, NULL);
  printf("%d of %d children hung\n", hung, forks);
  return hung != 0;
}
