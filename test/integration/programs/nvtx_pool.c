/* A pool that sub-allocates from slabs it took with cudaMalloc and says so through NVTX's
   memory extension (nvtx3/nvToolsExtMem.h), as RMM-like pools would. Offsets are fixed so
   that a test knows every figure (MiB from the slab's start):

   heap "slab", 64 MiB, 0-64:
     weights   0-16, before the loop, named "weights", kept to the end
     4 iterations, each an NVTX range "step":
       kv-block  16+4i to 20+4i, named "kv-block", kept (a leak of 4 MiB an iteration)
       scratch   48-56, unregistered by pointer within the iteration
       grow      40-42, resized to 40-43, unregistered by its handle within the iteration
     peak, in the last iteration: 16 + 16 + 8 + 3 = 43 MiB in 7 regions; free 21 MiB in
     two runs, 43-48 and 56-64 (the largest 8 MiB)
     at exit: still registered, 32 MiB in 5 regions
   heap "staging", 8 MiB of a second slab: two 1 MiB regions, then nvtxMemHeapReset, then
     nvtxMemHeapUnregister, then the slab is freed

   Without a tool attached every NVTX call is a no-op, and the program runs the same. */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExtMem.h>
#include <stdio.h>
#include <string.h>

#define MiB (1ull << 20)

static nvtxDomainHandle_t g_domain;

static nvtxMemHeapHandle_t heap_register(void* base, size_t size, const char* name) {
  nvtxMemVirtualRangeDesc_t range = {size, base};
  nvtxMemHeapDesc_t desc;
  memset(&desc, 0, sizeof desc);
  desc.extCompatID = NVTX_EXT_COMPATID_MEM;
  desc.structSize = sizeof desc;
  desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
  desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  desc.typeSpecificDescSize = sizeof range;
  desc.typeSpecificDesc = &range;
  desc.messageType = NVTX_MESSAGE_TYPE_ASCII;
  desc.message.ascii = name;
  return nvtxMemHeapRegister(g_domain, &desc);
}

/* Registers [base+offset, +size) in `heap`; its handle as the tool gave it. */
static nvtxMemRegionHandle_t region(nvtxMemHeapHandle_t heap, char* base, size_t offset, size_t size) {
  nvtxMemVirtualRangeDesc_t range = {size, base + offset};
  nvtxMemRegionHandle_t handle = 0;
  nvtxMemRegionsRegisterBatch_t b;
  memset(&b, 0, sizeof b);
  b.extCompatID = NVTX_EXT_COMPATID_MEM;
  b.structSize = sizeof b;
  b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  b.heap = heap;
  b.regionCount = 1;
  b.regionDescElementSize = sizeof range;
  b.regionDescElements = &range;
  b.regionHandleElementsOut = &handle;
  nvtxMemRegionsRegister(g_domain, &b);
  return handle;
}

static void name(char* base, size_t offset, const char* text) {
  nvtxMemRegionNameDesc_t d;
  memset(&d, 0, sizeof d);
  d.regionRefType = NVTX_MEM_REGION_REF_TYPE_POINTER;
  d.region.pointer = base + offset;
  d.nameType = NVTX_MESSAGE_TYPE_ASCII;
  d.name.ascii = text;
  nvtxMemRegionsNameBatch_t b;
  memset(&b, 0, sizeof b);
  b.extCompatID = NVTX_EXT_COMPATID_MEM;
  b.structSize = sizeof b;
  b.regionCount = 1;
  b.regionElementSize = sizeof d;
  b.regionElements = &d;
  nvtxMemRegionsName(g_domain, &b);
}

static void resize(char* base, size_t offset, size_t size) {
  nvtxMemVirtualRangeDesc_t range = {size, base + offset};
  nvtxMemRegionsResizeBatch_t b;
  memset(&b, 0, sizeof b);
  b.extCompatID = NVTX_EXT_COMPATID_MEM;
  b.structSize = sizeof b;
  b.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  b.regionDescCount = 1;
  b.regionDescElementSize = sizeof range;
  b.regionDescElements = &range;
  nvtxMemRegionsResize(g_domain, &b);
}

static void unregister(uint32_t ref_type, nvtxMemRegionRef_t ref) {
  nvtxMemRegionsUnregisterBatch_t b;
  memset(&b, 0, sizeof b);
  b.extCompatID = NVTX_EXT_COMPATID_MEM;
  b.structSize = sizeof b;
  b.refType = ref_type;
  b.refCount = 1;
  b.refElementSize = sizeof ref;
  b.refElements = &ref;
  nvtxMemRegionsUnregister(g_domain, &b);
}

/* Never inlined: its lines are its own frame's, in every build (the report names sites by them). */
static __attribute__((noinline)) void step(nvtxMemHeapHandle_t heap, char* slab, int i) {
  nvtxRangePushA("step");
  region(heap, slab, 16 * MiB + (size_t)i * 4 * MiB, 4 * MiB);
  name(slab, 16 * MiB + (size_t)i * 4 * MiB, "kv-block");
  region(heap, slab, 48 * MiB, 8 * MiB);
  nvtxMemRegionHandle_t grow = region(heap, slab, 40 * MiB, 2 * MiB);
  resize(slab, 40 * MiB, 3 * MiB);
  nvtxMemRegionRef_t scratch = {slab + 48 * MiB};
  unregister(NVTX_MEM_REGION_REF_TYPE_POINTER, scratch);
  nvtxMemRegionRef_t by_handle;
  by_handle.handle = grow;
  unregister(NVTX_MEM_REGION_REF_TYPE_HANDLE, by_handle);
  nvtxRangePop();
}

int main(void) {
  char *slab, *staging;
  if (cudaMalloc((void**)&slab, 64 * MiB) || cudaMalloc((void**)&staging, 8 * MiB)) return 1;
  g_domain = nvtxDomainCreateA("pool");
  nvtxMemHeapHandle_t heap = heap_register(slab, 64 * MiB, "slab");
  region(heap, slab, 0, 16 * MiB);
  name(slab, 0, "weights");
  for (int i = 0; i < 4; ++i) step(heap, slab, i);

  nvtxMemHeapHandle_t stage = heap_register(staging, 8 * MiB, "staging");
  region(stage, staging, 0, MiB);
  region(stage, staging, 4 * MiB, MiB);
  nvtxMemHeapReset(g_domain, stage);
  nvtxMemHeapUnregister(g_domain, stage);
  if (cudaFree(staging)) return 1;
  printf("pool: 2 heaps, %s\n", heap == stage ? "one handle" : "two handles");
  return 0;
}
