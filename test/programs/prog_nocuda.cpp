// Never touches CUDA (prints, forks, exits): with the preload library loaded,
// no trace file may appear for it or its child.
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>

int main() {
  std::printf("no cuda here\n");
  std::fflush(stdout);
  pid_t child = fork();
  if (child == 0) return 0;
  int status = 0;
  if (child > 0) waitpid(child, &status, 0);
  return child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
