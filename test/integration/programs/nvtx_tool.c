/* Stands in for a profiler's NVTX injection (Nsight Systems, compute-sanitizer): its
   InitializeInjectionNvtx2 takes RangePushA, RangePop and MarkA, counts the calls, and
   returns range depths offset by 100, so that a test sees both that it ran and that the
   program got its return values. Counts go to stderr at exit:
   "tool: N initializations, P pushes, Q pops, M marks, last push returned D".
   Its InitializeInjectionNvtxExtension takes the memory extension's heap register and
   region register and unregister (as compute-sanitizer does), giving handles of its own:
   heaps 0x7000 + n, regions their address + 1. When any came:
   "tool: H heaps, R regions registered, U unregistered by its handles, V by pointer". */
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>
#include <stdint.h>
#include <stdio.h>

static int g_inits, g_pushes, g_pops, g_marks, g_depth, g_last;
static int g_heaps, g_regions, g_by_handle, g_by_pointer;

static int tool_push(const char* message) {
  (void)message;
  ++g_pushes;
  return g_last = 100 + g_depth++;
}
static int tool_pop(void) {
  ++g_pops;
  return 100 + --g_depth;
}
static void tool_mark(const char* message) {
  (void)message;
  ++g_marks;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  ++g_inits;
  const NvtxExportTableCallbacks* cb = (const NvtxExportTableCallbacks*)get(NVTX_ETID_CALLBACKS);
  NvtxFunctionTable t = 0;
  unsigned n = 0;
  if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n)) return 0;
  *t[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)tool_push;
  *t[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)tool_pop;
  *t[NVTX_CBID_CORE_MarkA] = (NvtxFunctionPointer)tool_mark;
  return 1;
}

static nvtxMemHeapHandle_t tool_heap(nvtxDomainHandle_t d, const nvtxMemHeapDesc_t* desc) {
  (void)d, (void)desc;
  return (nvtxMemHeapHandle_t)(uintptr_t)(0x7000 + ++g_heaps);
}
static void tool_regions(nvtxDomainHandle_t d, const nvtxMemRegionsRegisterBatch_t* b) {
  (void)d;
  const nvtxMemVirtualRangeDesc_t* r = (const nvtxMemVirtualRangeDesc_t*)b->regionDescElements;
  for (size_t i = 0; i < b->regionCount; ++i) {
    ++g_regions;
    if (b->regionHandleElementsOut) b->regionHandleElementsOut[i] = (nvtxMemRegionHandle_t)((uintptr_t)r[i].ptr + 1);
  }
}
static void tool_unregister(nvtxDomainHandle_t d, const nvtxMemRegionsUnregisterBatch_t* b) {
  (void)d;
  const nvtxMemRegionRef_t* r = b->refElements;
  for (size_t i = 0; i < b->refCount; ++i) {
    if (b->refType == NVTX_MEM_REGION_REF_TYPE_HANDLE && ((uintptr_t)r[i].handle & 1)) ++g_by_handle;
    else if (b->refType == NVTX_MEM_REGION_REF_TYPE_POINTER) ++g_by_pointer;
  }
}

__attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t* info) {
  if (info->moduleId != NVTX_EXT_MODULEID_MEM) return 1;
  for (size_t s = 0; s < info->segmentsCount; ++s) {
    intptr_t* slots = info->segments[s].functionSlots;
    slots[NVTX3EXT_CBID_nvtxMemHeapRegister] = (intptr_t)tool_heap;
    slots[NVTX3EXT_CBID_nvtxMemRegionsRegister] = (intptr_t)tool_regions;
    slots[NVTX3EXT_CBID_nvtxMemRegionsUnregister] = (intptr_t)tool_unregister;
  }
  return 1;
}

__attribute__((destructor)) static void say(void) {
  fprintf(stderr, "tool: %d initializations, %d pushes, %d pops, %d marks, last push returned %d\n", g_inits, g_pushes,
          g_pops, g_marks, g_last);
  if (g_heaps || g_regions)
    fprintf(stderr, "tool: %d heaps, %d regions registered, %d unregistered by its handles, %d by pointer\n", g_heaps,
            g_regions, g_by_handle, g_by_pointer);
}
