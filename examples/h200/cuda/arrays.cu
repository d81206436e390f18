// CUDA arrays through the runtime, with known descriptors; prints the bytes the trace must
// show (docs/trace-format.md, "1.9": texels x bytes per texel, levels summed).
//   A 1024 x 768 float4          = 1024*768*16                          = 12,582,912 B
//   B 256 x 256 x 64 uchar4      = 256*256*64*4                         = 16,777,216 B
//   C mipmapped 1024 x 1024 float, 4 levels = (1024^2+512^2+256^2+128^2)*4 =  5,570,560 B
// All three live at once: 34,930,688 B (the peak of arrays); C is freed first, then A, and
// B is left live at exit (a leak of 16,777,216 B in the report).
#include <cuda_runtime_api.h>
#include <stdio.h>

int main(void) {
  cudaArray_t a = nullptr, b = nullptr;
  cudaMipmappedArray_t c = nullptr;
  const cudaChannelFormatDesc f4 = cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindFloat);
  const cudaChannelFormatDesc u4 = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
  const cudaChannelFormatDesc f1 = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  if (cudaMallocArray(&a, &f4, 1024, 768) != cudaSuccess) return 1;
  if (cudaMalloc3DArray(&b, &u4, make_cudaExtent(256, 256, 64)) != cudaSuccess) return 2;
  if (cudaMallocMipmappedArray(&c, &f1, make_cudaExtent(1024, 1024, 0), 4) != cudaSuccess) return 3;
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  printf("expected: A 12582912 B 16777216 C 5570560 peak 34930688 end-live-array 16777216\n");
  printf("cudaMemGetInfo used with all three live: %zu\n", total_b - free_b);
  if (cudaFreeMipmappedArray(c) != cudaSuccess) return 4;
  if (cudaFreeArray(a) != cudaSuccess) return 5;
  return 0;  // B left live on purpose
}
