/* A pool's NVTX memory-extension calls that strained the tracer (review of 2026-12-04):
     handles N   N regions, each registered and unregistered by the handle the tool gave
                 (a chained tool's handles are not addresses: the tracer maps them back)
     badstring   a heap named by a "registered string" handle that no one registered
     batch N     N regions registered in one batch, then unregistered in one batch
   Prints what it did; exits 0. */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExtMem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static nvtxDomainHandle_t g_domain;

static nvtxMemHeapHandle_t heap(void* base, size_t size, const nvtxMessageValue_t* name, int32_t name_type) {
  nvtxMemVirtualRangeDesc_t range = {size, base};
  nvtxMemHeapDesc_t d;
  memset(&d, 0, sizeof d);
  d.extCompatID = NVTX_EXT_COMPATID_MEM;
  d.structSize = sizeof d;
  d.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  d.typeSpecificDescSize = sizeof range;
  d.typeSpecificDesc = &range;
  if (name) d.messageType = name_type, d.message = *name;
  return nvtxMemHeapRegister(g_domain, &d);
}

static void regions(nvtxMemHeapHandle_t h, const nvtxMemVirtualRangeDesc_t* r, size_t n, nvtxMemRegionHandle_t* out) {
  nvtxMemRegionsRegisterBatch_t b;
  memset(&b, 0, sizeof b);
  b.extCompatID = NVTX_EXT_COMPATID_MEM;
  b.structSize = sizeof b;
  b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  b.heap = h;
  b.regionCount = n;
  b.regionDescElementSize = sizeof *r;
  b.regionDescElements = r;
  b.regionHandleElementsOut = out;
  nvtxMemRegionsRegister(g_domain, &b);
}

static void unregister(uint32_t type, const nvtxMemRegionRef_t* refs, size_t n) {
  nvtxMemRegionsUnregisterBatch_t u;
  memset(&u, 0, sizeof u);
  u.extCompatID = NVTX_EXT_COMPATID_MEM;
  u.structSize = sizeof u;
  u.refType = type;
  u.refCount = n;
  u.refElementSize = sizeof *refs;
  u.refElements = refs;
  nvtxMemRegionsUnregister(g_domain, &u);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  const size_t n = argc > 2 ? strtoul(argv[2], 0, 0) : 0;
  char* slab;
  if (cudaMalloc((void**)&slab, 64 << 20)) return 1;
  g_domain = nvtxDomainCreateA("abuse");
  if (!strcmp(mode, "handles")) {
    nvtxMemHeapHandle_t h = heap(slab, 64 << 20, 0, 0);
    for (size_t i = 0; i < n; ++i) {
      nvtxMemVirtualRangeDesc_t r = {1024, slab + (i % (1 << 16)) * 1024};
      nvtxMemRegionRef_t ref;
      ref.handle = 0;
      regions(h, &r, 1, &ref.handle);
      unregister(NVTX_MEM_REGION_REF_TYPE_HANDLE, &ref, 1);
    }
    printf("%zu regions registered and unregistered by handle\n", n);
  } else if (!strcmp(mode, "badstring")) {
    nvtxMessageValue_t name;
    name.registered = (nvtxStringHandle_t)(uintptr_t)0x10;
    heap(slab, 64 << 20, &name, NVTX_MESSAGE_TYPE_REGISTERED);
    printf("a heap named by a handle no one registered\n");
  } else if (!strcmp(mode, "batch")) {
    nvtxMemVirtualRangeDesc_t* r = calloc(n, sizeof *r);
    nvtxMemRegionRef_t* refs = calloc(n, sizeof *refs);
    if (!r || !refs) return 1;
    for (size_t i = 0; i < n; ++i) r[i].size = 64, r[i].ptr = slab + i * 64, refs[i].pointer = r[i].ptr;
    nvtxMemHeapHandle_t h = heap(slab, 64 << 20, 0, 0);
    regions(h, r, n, 0);
    unregister(NVTX_MEM_REGION_REF_TYPE_POINTER, refs, n);
    free(r);
    free(refs); /* LeakSanitizer fails the program otherwise (ASan tree) */
    printf("%zu regions in one batch, registered and unregistered\n", n);
  } else {
    return 2;
  }
  return 0;
}
