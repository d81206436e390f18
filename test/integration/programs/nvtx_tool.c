/* Stands in for a profiler's NVTX injection (Nsight Systems, compute-sanitizer): its
   InitializeInjectionNvtx2 takes RangePushA, RangePop and MarkA, counts the calls, and
   returns range depths offset by 100, so that a test sees both that it ran and that the
   program got its return values. Counts go to stderr at exit:
   "tool: N initializations, P pushes, Q pops, M marks, last push returned D". */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

static int g_inits, g_pushes, g_pops, g_marks, g_depth, g_last;

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

__attribute__((destructor)) static void say(void) {
  fprintf(stderr, "tool: %d initializations, %d pushes, %d pops, %d marks, last push returned %d\n", g_inits, g_pushes,
          g_pops, g_marks, g_last);
}
