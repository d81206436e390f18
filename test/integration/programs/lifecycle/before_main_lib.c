/* A library whose constructor makes the process's first CUDA call (1 MiB), so the trace
   begins before main (before_main.c). */
#include <cuda_runtime_api.h>

static void* kept;

__attribute__((constructor)) static void allocate_at_load(void) { (void)cudaMalloc(&kept, 1 << 20); }

int before_main_lib_allocated(void) { return kept != 0; }
