/* Runs /bin/true through vfork + execv before its first CUDA call, as Python's
   subprocess does: the vfork child shares the parent's memory, so whatever our exec
   hook resolved there is the parent's too. The allocation after must still be placed on
   its device (it was put on the host when libc's execv was taken for a driver function). */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  char* argv[] = {"true", NULL};
  pid_t pid = vfork();
  if (pid == 0) {
    execv("/bin/true", argv);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  void* p = NULL;
  const cudaError_t r = cudaMalloc(&p, 1 << 20);
  printf("true exited %d, cudaMalloc %d\n", WEXITSTATUS(status), (int)r);
  return r;
}
