// Allocates 100 times, then execs itself: the first image's trace keeps 0 events.
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char** argv) {
  void* p[100];
  for (int i = 0; i < 100; i++) cudaMalloc(&p[i], 1000 + i);
  if (argc > 1 && strcmp(argv[1], "again") == 0) return 0;
  char* a[] = {argv[0], "again", 0};
  execv(argv[0], a);
  perror("execv");
  return 1;
}
