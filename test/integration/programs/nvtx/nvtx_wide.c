/* NVTX's wide entry points reach the trace in UTF-8 (wchar_t is UTF-32 on Linux), each name
 * cut as a narrow one at 4,096 bytes but never inside a character. In order, each range
 * around allocations of its own:
 *   nvtxRangePushW(L"étape-ü")                      1 MiB, pop
 *   nvtxRangeStartW(L"emoji-😀") (U+1F600)          2 MiB, end
 *   nvtxDomainRangePushEx, a NVTX_MESSAGE_TYPE_UNICODE message L"übung-Ω", in domain "wide":
 *                                                   8 MiB, pop
 *   nvtxRangePushW of 2,047 × U+00E9 then U+20AC "€" and "tail": 3 MiB, pop. é is 2 bytes in
 *     UTF-8, so the 2,047 take 4,094 bytes and € (3 bytes) would end at 4,097: the name kept
 *     is the 2,047 é alone (a cut at byte 4,096 would keep € half: e2 82)
 *   nvtxDomainMarkEx of a string registered with nvtxDomainRegisterStringW(L"registriert-ß")
 *   nvtxMarkW of "bad-" then 0x110000 (past U+10FFFF) and 0xD800 (a surrogate): each U+FFFD;
 *     4 MiB; the same mark again
 * so the registered mark's one stretch (to the trace's end) holds the last 4 MiB, as does the
 * bad mark's first; its second holds nothing. Prints the levels the pushes and pops return. */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <wchar.h>

#define MiB (1u << 20)

static wchar_t long_name[2047 + 1 + 4 + 1];

int main(void) {
  void *first, *p1, *p2, *p8, *p3, *p4;
  if (cudaMalloc(&first, 4096) != cudaSuccess) return 1; /* starts the trace */

  const int push = nvtxRangePushW(L"\u00e9tape-\u00fc");
  if (cudaMalloc(&p1, 1 * MiB) != cudaSuccess) return 1;
  const int pop = nvtxRangePop();

  const nvtxRangeId_t id = nvtxRangeStartW(L"emoji-\U0001F600");
  if (cudaMalloc(&p2, 2 * MiB) != cudaSuccess) return 1;
  nvtxRangeEnd(id);

  nvtxDomainHandle_t domain = nvtxDomainCreateA("wide");
  nvtxEventAttributes_t a = {0};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_UNICODE;
  a.message.unicode = L"\u00fcbung-\u03a9";
  const int push_ex = nvtxDomainRangePushEx(domain, &a);
  if (cudaMalloc(&p8, 8 * MiB) != cudaSuccess) return 1;
  const int pop_ex = nvtxDomainRangePop(domain);

  for (int i = 0; i < 2047; ++i) long_name[i] = 0x00e9;
  wcscpy(long_name + 2047, L"\u20actail");
  nvtxRangePushW(long_name);
  if (cudaMalloc(&p3, 3 * MiB) != cudaSuccess) return 1;
  nvtxRangePop();

  nvtxEventAttributes_t r = {0};
  r.version = NVTX_VERSION;
  r.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  r.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  r.message.registered = nvtxDomainRegisterStringW(domain, L"registriert-\u00df");
  nvtxDomainMarkEx(domain, &r);

  const wchar_t bad[] = {L'b', L'a', L'd', L'-', (wchar_t)0x110000, (wchar_t)0xD800, 0};
  nvtxMarkW(bad);
  if (cudaMalloc(&p4, 4 * MiB) != cudaSuccess) return 1;
  nvtxMarkW(bad);
  printf("wide: push %d, pop %d; domain push %d, pop %d\n", push, pop, push_ex, pop_ex);
  return 0;
}
