/* Threads that keep allocating while the process ends (issue 29.5): argv[1] "exit" or
   "_exit", argv[2] the number of threads. Each thread allocates and frees 4 KiB through
   the driver API for ever, 200 frames deep (a driver hook decides to record before the
   call, then unwinds: with CUMEMTRACE_DEPTH=256 a call begun before tracing stopped is
   still unwinding when the writer appends the EndRecord, now and then); main ends the process once every thread has
   made a pair, with one 1 MiB block live. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_int g_started;
static CUcontext g_context;

static void* allocate(void) {
  if (cuCtxSetCurrent(g_context) != CUDA_SUCCESS) return NULL;
  for (int first = 1;; first = 0) {
    CUdeviceptr p = 0;
    if (cuMemAlloc_v2(&p, 4096) == CUDA_SUCCESS) cuMemFree_v2(p);
    if (first) atomic_fetch_add(&g_started, 1);
  }
  return NULL;
}

static volatile int g_sink;

static void* __attribute__((noinline)) deep(int n) {
  void* r = n > 0 ? deep(n - 1) : allocate();
  g_sink = n;  // work after the call: no tail call, each level keeps its frame
  return r;
}

static void* allocate_for_ever(void* arg) {
  (void)arg;
  return deep(200);
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const int threads = atoi(argv[2]);
  void* live = NULL;
  if (cudaMalloc(&live, 1 << 20)) return 3;
  if (cuCtxGetCurrent(&g_context) != CUDA_SUCCESS || !g_context) return 6;
  for (int i = 0; i < threads; ++i) {
    pthread_t t;
    if (pthread_create(&t, NULL, allocate_for_ever, NULL)) return 4;
  }
  while (atomic_load(&g_started) < threads) usleep(100);
  if (!strcmp(argv[1], "_exit")) _exit(0);
  if (!strcmp(argv[1], "exit")) exit(0);
  return 5;
}
