/* Asks dlsym(RTLD_DEFAULT) for CUDA entry points in a process that loaded no CUDA
   library: must be NULL with a dlerror() message, preloaded or not (code probes "is the
   CUDA runtime loaded?" this way). */
#include <dlfcn.h>
#include <stdio.h>

int main(void) {
  void* rt = dlsym(RTLD_DEFAULT, "cudaMalloc");
  const char* err = dlerror();
  void* drv = dlsym(RTLD_DEFAULT, "cuMemAlloc_v2");
  printf("cudaMalloc %s (%s), cuMemAlloc_v2 %s\n", rt ? "found" : "absent", err ? "dlerror set" : "no dlerror",
         drv ? "found" : "absent");
  return 0;
}
