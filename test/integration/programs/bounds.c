/* Past what the tracer keeps at once (docs/cli.md, "What the tracer bounds"): 4,100
 * nvtxRangeStartA ranges open together, then each ended (4,096 ids are kept: 4 ends cannot
 * be recorded); NVTX pushes 70 deep, each popped (the 64 innermost names are kept: 6 pops
 * name no range); tags 66 deep, each popped (2 name none); 4,100 strings registered (4,096
 * are kept: 4 read "(registered string)"); 4,100 domains (4,096 names are kept apart: 4 are
 * the default domain). Each is counted in the trace.
 * The tag functions are the preloaded library's, found with dlsym; without it, exit 2. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

static nvtxRangeId_t ids[4100];

int main(void) {
  int (*tag_push)(const char*) = (int (*)(const char*))dlsym(RTLD_DEFAULT, "cumemtrace_tag_push");
  int (*tag_pop)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cumemtrace_tag_pop");
  if (!tag_push || !tag_pop) return 2;
  void* p = NULL;
  if (cudaMalloc(&p, 1u << 20) != cudaSuccess) return 1; /* starts the trace */
  for (int i = 0; i < 4100; ++i) ids[i] = nvtxRangeStartA("open");
  for (int i = 0; i < 4100; ++i) nvtxRangeEnd(ids[i]);
  for (int i = 0; i < 70; ++i) nvtxRangePushA("deep");
  for (int i = 0; i < 70; ++i) nvtxRangePop();
  for (int i = 0; i < 66; ++i) tag_push("tagged");
  int unnamed = 0;
  for (int i = 0; i < 66; ++i) unnamed += tag_pop() == -1;
  for (int i = 0; i < 4100; ++i) nvtxDomainRegisterStringA(NULL, "s");
  char name[16];
  for (int i = 0; i < 4100; ++i) {
    snprintf(name, sizeof name, "d%d", i);
    nvtxDomainCreateA(name);
  }
  printf("%d tag pops named no tag\n", unnamed);
  return cudaFree(p) == cudaSuccess ? 0 : 1;
}
