/* NVTX ranges and tags pushed and popped after the C++ thread_local destructors have run,
   as compute-sanitizer's libraries do at exit (H200 run AR: the process died of SIGSEGV at
   exit with the tracer as NVTX's tool): from an atexit handler of the main thread, and from
   a pthread key destructor of a second thread (both run after that thread's thread_local
   destructors in glibc). Prints "late ranges done" from each. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*tag_fn)(const char*);
typedef int (*pop_fn)(void);

static void late(const char* who) {
  tag_fn push = (tag_fn)dlsym(RTLD_DEFAULT, "cumemtrace_tag_push");
  pop_fn pop = (pop_fn)dlsym(RTLD_DEFAULT, "cumemtrace_tag_pop");
  for (int i = 0; i < 100; ++i) {
    nvtxRangePushA("late");
    nvtxRangePushA("later");
    nvtxRangePop();
    nvtxRangePop();
    if (push && pop) push("late tag"), pop();
  }
  printf("late ranges done (%s)\n", who);
  fflush(stdout);
}

static void at_exit(void) { late("atexit"); }
static void key_gone(void* v) { late((const char*)v); }

static void* worker(void* arg) {
  pthread_key_t* key = (pthread_key_t*)arg;
  nvtxRangePushA("worker"); /* this thread's stack exists before its end */
  nvtxRangePop();
  pthread_setspecific(*key, "thread end");
  return NULL;
}

int main(void) {
  void* p;
  if (cudaMalloc(&p, 1 << 20)) return 1;
  nvtxRangePushA("main");
  nvtxRangePop();
  pthread_key_t key;
  pthread_t t;
  if (pthread_key_create(&key, key_gone) || pthread_create(&t, NULL, worker, &key) || pthread_join(t, NULL)) return 1;
  atexit(at_exit);
  return 0;
}
