/* Ends in the way argv[1] names, right after its allocations (before the writer's first
   flush): quick_exit (an at_quick_exit handler frees the 2 MiB one first), or an exec of
   itself with argv[1] = "again" through execve, execveat (by directory descriptor and
   relative name), fexecve, or an execve that fails (then allocates 9 MiB more and returns,
   or, with execve_fails_killed, is killed).
   Each allocation i of the first image is (i + 1) MiB; the image exec'd makes one 7 MiB
   allocation and returns 0. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <signal.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char** environ;
static void* g_two;

static void free_two(void) { cudaFree(g_two); }

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const char* how = argv[1];
  void* p = NULL;
  if (!strcmp(how, "again")) return cudaMalloc(&p, 7 << 20) ? 5 : 0;
  const int count = atoi(argv[2]);
  for (int i = 0; i < count; ++i)
    if (cudaMalloc(i == 1 ? &g_two : &p, (size_t)(i + 1) << 20)) return 5;
  char* again[] = {argv[0], "again", "0", NULL};
  if (!strcmp(how, "quick_exit")) {
    at_quick_exit(free_two);
    quick_exit(0);
  }
  if (!strcmp(how, "execve")) execve(argv[0], again, environ);
  if (!strcmp(how, "execveat")) {
    char dir_path[4096], base_path[4096];
    snprintf(dir_path, sizeof dir_path, "%s", argv[0]);
    snprintf(base_path, sizeof base_path, "%s", argv[0]);
    const int dir = open(dirname(dir_path), O_RDONLY | O_DIRECTORY);
    execveat(dir, basename(base_path), again, environ, 0);
  }
  if (!strcmp(how, "fexecve")) fexecve(open(argv[0], O_RDONLY), again, environ);
  if (!strcmp(how, "execve_fails") || !strcmp(how, "execve_fails_killed")) {
    char* none[] = {"absent", NULL};
    if (execve("/nonexistent/absent", none, environ) != -1) return 6;
    if (cudaMalloc(&p, 9 << 20)) return 7;
    if (!strcmp(how, "execve_fails")) return 0;
    usleep(500 * 1000);  // flushed (CUMEMTRACE_FLUSH_MS=1 in the test), then killed
    raise(SIGKILL);
  }
  perror(how);
  return 9;
}
