// Page-locking memory the program already has: two registrations through the runtime
// (3 MiB, then 1 MiB), a failed second registration of the first range, the 1 MiB
// unregistered, a failed unregistration of a range never registered; the 3 MiB left
// registered at exit.
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  void *a = NULL, *b = NULL;
  if (posix_memalign(&a, 4096, 3 << 20) || posix_memalign(&b, 4096, 1 << 20)) return 1;
  if (cudaHostRegister(a, 3 << 20, cudaHostRegisterDefault) != cudaSuccess) return 2;
  if (cudaHostRegister(b, 1 << 20, cudaHostRegisterPortable) != cudaSuccess) return 3;
  if (cudaHostRegister(a, 4096, cudaHostRegisterDefault) != cudaErrorHostMemoryAlreadyRegistered) return 4;
  if (cudaHostUnregister(b) != cudaSuccess) return 5;
  if (cudaHostUnregister(b) != cudaErrorHostMemoryNotRegistered) return 6;
  printf("registered 3 MiB left\n");
  return 0;
}
