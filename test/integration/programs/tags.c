/* Tags (api.h: cumemtrace_tag_push, cumemtrace_tag_pop) around allocations through the
 * simulated runtime, nested, and on a second thread with a tag of its own:
 *   1 MiB before any tag; tag "load": 2 MiB, then tag "inner": 4 MiB made and freed;
 *   inside "load" a thread tags "worker" and keeps 3 MiB (its own thread's, not load's).
 * The library is preloaded: its functions are found with dlsym; without it, exit 2. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

typedef int (*push_fn)(const char*);
typedef int (*pop_fn)(void);
static push_fn push;
static pop_fn pop;

static void* worker(void* arg) {
  void* p = NULL;
  (void)arg;
  push("worker");
  if (cudaMalloc(&p, 3u << 20) != cudaSuccess) return (void*)1;
  pop();
  return NULL;
}

int main(void) {
  push = (push_fn)dlsym(RTLD_DEFAULT, "cumemtrace_tag_push");
  pop = (pop_fn)dlsym(RTLD_DEFAULT, "cumemtrace_tag_pop");
  if (!push || !pop) return 2;
  void *a = NULL, *b = NULL, *c = NULL;
  if (cudaMalloc(&a, 1u << 20) != cudaSuccess) return 1; /* starts the trace */
  int recorded = push("load") == 0;
  if (cudaMalloc(&b, 2u << 20) != cudaSuccess) return 1;
  recorded += push("inner") == 0;
  if (cudaMalloc(&c, 4u << 20) != cudaSuccess || cudaFree(c) != cudaSuccess) return 1;
  recorded += pop() == 0;
  pthread_t t;
  void* failed = NULL;
  if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, &failed) != 0 || failed) return 1;
  recorded += pop() == 0;
  recorded += pop() == -1; /* nothing open: not recorded */
  printf("%d\n", recorded);
  return 0;
}
