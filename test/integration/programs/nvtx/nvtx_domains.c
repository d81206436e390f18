/* NVTX pushes nest per domain, and pushes and pops return levels as nvToolsExt.h specifies.
 * In the default domain: push "x" (level 0), push "y" (1), pop (ends y: 1), pop (ends x: 0),
 * pop with nothing open (-1). Then two domains interleaved on one thread:
 *   push "a-range" in a (0); 1 MiB; push "b-range" in b (0); pop a (ends a-range: 0);
 *   8 MiB; pop b (ends b-range: 0)
 * so a-range allocates 1 MiB and b-range 8 MiB (one stack for both domains would end
 * b-range at a's pop and a-range at b's: 9 MiB and 0 B). Then a domain named by a wide
 * string: nvtxDomainCreateW(L"w\u00efde") is the domain nvtxDomainCreateA gives for its UTF-8
 * spelling (bytes 77 c3 af 64 65: same 1), not the default domain; in it:
 *   push "w-range" in it (0); push "d-range" in the default domain (0); 2 MiB;
 *   pop it (ends w-range: 0); 4 MiB; pop the default domain (ends d-range: 0)
 * so w-range allocates 2 MiB and d-range 6 MiB (a wide domain taken for the default one
 * would push d-range at level 1 and end it at the first pop: 2 MiB, and w-range 6 MiB). */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <wchar.h>

static int push_in(nvtxDomainHandle_t d, const char* name) {
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  return nvtxDomainRangePushEx(d, &a);
}

int main(void) {
  void *first, *one, *eight, *two, *four;
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
  nvtxDomainHandle_t w = nvtxDomainCreateW(L"w\u00efde");
  const int same = w != NULL && w == nvtxDomainCreateA(
                                         "w\xc3\xaf"
                                         "de");
  const int push_w = push_in(w, "w-range"), push_d = nvtxRangePushA("d-range");
  if (cudaMalloc(&two, 2u << 20) != cudaSuccess) return 1;
  const int pop_w = nvtxDomainRangePop(w);
  if (cudaMalloc(&four, 4u << 20) != cudaSuccess) return 1;
  const int pop_d = nvtxRangePop();
  printf("wide: same %d, push %d %d, pop %d %d\n", same, push_w, push_d, pop_w, pop_d);
  return 0;
}
