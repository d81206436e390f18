/* NVTX pushes nest per domain, and pushes and pops return levels as nvToolsExt.h specifies.
 * In the default domain: push "x" (level 0), push "y" (1), pop (ends y: 1), pop (ends x: 0),
 * pop with nothing open (-1). Then two domains interleaved on one thread:
 *   push "a-range" in a (0); 1 MiB; push "b-range" in b (0); pop a (ends a-range: 0);
 *   8 MiB; pop b (ends b-range: 0)
 * so a-range allocates 1 MiB and b-range 8 MiB (one stack for both domains would end
 * b-range at a's pop and a-range at b's: 9 MiB and 0 B). */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

static int push_in(nvtxDomainHandle_t d, const char* name) {
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  return nvtxDomainRangePushEx(d, &a);
}

int main(void) {
  void *first, *one, *eight;
  if (cudaMalloc(&first, 4096) != cudaSuccess) return 1; /* starts the trace */
  const int x = nvtxRangePushA("x"), y = nvtxRangePushA("y");
  const int end_y = nvtxRangePop(), end_x = nvtxRangePop(), none = nvtxRangePop();
  printf("default: push %d %d, pop %d %d %d\n", x, y, end_y, end_x, none);
  nvtxDomainHandle_t a = nvtxDomainCreateA("a"), b = nvtxDomainCreateA("b");
  const int push_a = push_in(a, "a-range");
  if (cudaMalloc(&one, 1u << 20) != cudaSuccess) return 1;
  const int push_b = push_in(b, "b-range");
  const int pop_a = nvtxDomainRangePop(a);
  if (cudaMalloc(&eight, 8u << 20) != cudaSuccess) return 1;
  const int pop_b = nvtxDomainRangePop(b);
  printf("domains: push %d %d, pop %d %d\n", push_a, push_b, pop_a, pop_b);
  return 0;
}
