// A CUDA process that forks a child which never touches CUDA: the child must
// not inherit (or write) the parent's trace, and exits either at once or after
// a short sleep (so its exit races the parent's work).
#include "runtime_common.h"

#include <sys/wait.h>
#include <unistd.h>

int scenario_fork(bool child_sleeps) {
  void* p;
  CHECK_RT(cudaMalloc(&p, 1 << 20));
  report_alloc("cudaMalloc", p, 1 << 20);
  std::fflush(stdout);  // or the child would print our buffered lines again
  pid_t child = fork();
  if (child < 0) die("fork", -1);
  if (child == 0) {
    if (child_sleeps) usleep(100 * 1000);
    std::printf("child exits\n");
    std::exit(0);  // exit(), not _exit(): run atexit handlers as a real program would
  }
  int status = 0;
  waitpid(child, &status, 0);
  CHECK_RT(cudaFree(p));
  report_free("cudaFree", p);
  std::printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
