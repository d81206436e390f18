/* A program that defines its own cuMemAlloc_v2 (exported: -rdynamic) and has the driver
   loaded RTLD_GLOBAL: dlsym(RTLD_DEFAULT) finds its own function for that name, the
   driver's for cuMemFree_v2, and nothing (with dlerror()'s text) for cudaMalloc. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

typedef int CUresult;
typedef uintptr_t CUdeviceptr;

CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t size) {
  (void)size;
  *p = 0;
  return 999;
}

int main(void) {
  if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) return 3;
  void* own = dlsym(RTLD_DEFAULT, "cuMemAlloc_v2");
  printf("cuMemAlloc_v2 %s\n", own == (void*)cuMemAlloc_v2 ? "the program's" : "another");
  printf("cuMemFree_v2 %s\n", dlsym(RTLD_DEFAULT, "cuMemFree_v2") ? "found" : "absent");
  void* rt = dlsym(RTLD_DEFAULT, "cudaMalloc");
  const char* err = dlerror();
  printf("cudaMalloc %s: %s\n", rt ? "found" : "absent", err ? err : "no dlerror");
  return 0;
}
