// Two sides of one CUDA IPC exchange, run as two processes that pass the handle through a
// file: `ipc_pair export FILE` allocates 16 MiB, exports it (cudaIpcGetMemHandle), writes
// the handle's 64 bytes to FILE and exits with the allocation live; `ipc_pair import FILE`
// opens that handle (cudaIpcOpenMemHandle) and exits with it open. A real driver needs the
// exporter alive while the importer opens; the simulated one lays the exporter's pid,
// device, address and size into the handle (sim/cuda/api/api_ipc.cpp), so the two may run
// one after the other.
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  cudaIpcMemHandle_t h;
  if (strcmp(argv[1], "export") == 0) {
    void* p = NULL;
    if (cudaMalloc(&p, 16 << 20) != cudaSuccess) return 3;
    if (cudaIpcGetMemHandle(&h, p) != cudaSuccess) return 4;
    FILE* f = fopen(argv[2], "wb");
    if (!f || fwrite(&h, sizeof h, 1, f) != 1 || fclose(f) != 0) return 5;
    printf("exported\n");
    return 0;
  }
  FILE* f = fopen(argv[2], "rb");
  if (!f || fread(&h, sizeof h, 1, f) != 1) return 6;
  fclose(f);
  void* q = NULL;
  if (cudaIpcOpenMemHandle(&q, h, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) return 7;
  printf("imported\n");
  return 0;
}
