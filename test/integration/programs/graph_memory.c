/* CUDA graph memory (issue 12): a graph's allocation nodes take device memory from the
   device's graph memory pool at launch, and the pool keeps it until cuDeviceGraphMemTrim.
   Modes:
     inside  3 x 1 GiB allocated and freed inside one stream capture; launch, destroy, trim
     escape  3 x 1 GiB allocated in the capture and not freed there; launch, cudaFreeAsync
             of the three on the stream, destroy, trim
     nodes   cuGraphAddMemAllocNode 256 MiB twice, cuGraphAddMemFreeNode of the first;
             launch, cudaFreeAsync of the second, trim
     held    as inside, but no trim: then a 64 MiB cudaMalloc makes a new peak while the
             pool still holds 1 GiB (its reading splits NVML's figure)
     nested  a graph (1 GiB allocated and freed in it) launched into another stream's
             capture, which is then launched: the first launch happens during a capture
     paths   the graph entry points called by symbol, by dlsym and by cuGetProcAddress
     cold    as inside, with no allocation before the capture: the thread's only device
             fact is its context's creation
     other-thread  as inside, captured by a thread that made no CUDA call before (the
             main thread made the context)
     named-device  as inside, after a cuMemCreate that names device 1 (SIMCUDA_DEVICES=2):
             the thread's own device stays 0
   Prints the pool's figures (reserved/used, MiB) after each step; exit 0 only when every
   call succeeded and nothing was called that a capture prohibits. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define GiB (1ull << 30)
#define MiB (1ull << 20)

static int failures;
#define CHECK(call)                         \
  do {                                      \
    int r_ = (int)(call);                   \
    if (r_) {                               \
      printf("FAILED %s: %d\n", #call, r_); \
      ++failures;                           \
    }                                       \
  } while (0)

static void figures(const char* step) {
  cuuint64_t reserved = 0, used = 0;
  CHECK(cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &reserved));
  CHECK(cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &used));
  printf("%s: reserved %llu MiB, used %llu MiB\n", step, reserved / MiB, used / MiB);
}

static unsigned long long violations(void) {
  unsigned long long (*f)(void) =
      (unsigned long long (*)(void))dlsym(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD), "simcuda_capture_violations");
  return f ? f() : ~0ull;
}

static void captured(int free_inside, int trim) {
  cudaStream_t s;
  void* p[3] = {0};
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 3; ++i) {
    CHECK(cudaMallocAsync(&p[i], GiB, s));
    if (free_inside) CHECK(cudaFreeAsync(p[i], s));
  }
  CHECK(cudaStreamEndCapture(s, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  figures("instantiated");
  CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  figures("launched");
  if (!free_inside) {
    for (int i = 0; i < 3; ++i) CHECK(cudaFreeAsync(p[i], s));
    CHECK(cudaStreamSynchronize(s));
    figures("freed");
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  figures("destroyed");
  if (!trim) return;
  CHECK(cudaDeviceGraphMemTrim(0));
  figures("trimmed");
}

/* Graph A: 1 GiB allocated and freed. Launched into a capture of stream t (a child graph),
   whose graph B is then launched: B holds A's nodes, so the pool reserves 1 GiB. */
static void nested(void) {
  cudaStream_t s, t;
  void* p = NULL;
  cudaGraph_t a, b;
  cudaGraphExec_t exec_a, exec_b;
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaStreamCreate(&t));
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaMallocAsync(&p, GiB, s));
  CHECK(cudaFreeAsync(p, s));
  CHECK(cudaStreamEndCapture(s, &a));
  CHECK(cudaGraphInstantiate(&exec_a, a, 0));
  CHECK(cudaStreamBeginCapture(t, cudaStreamCaptureModeGlobal));
  CHECK(cudaGraphLaunch(exec_a, t));
  CHECK(cudaStreamEndCapture(t, &b));
  CHECK(cudaGraphInstantiate(&exec_b, b, 0));
  figures("captured");
  CHECK(cudaGraphLaunch(exec_b, t));
  figures("launched");
}

typedef CUresult (*AddAlloc)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, CUDA_MEM_ALLOC_NODE_PARAMS*);
typedef CUresult (*AddFree)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, CUdeviceptr);
typedef CUresult (*Launch)(CUgraphExec, CUstream);
typedef CUresult (*ExecDestroy)(CUgraphExec);
typedef CUresult (*Trim)(CUdevice);

struct GraphApi {
  AddAlloc add_alloc;
  AddFree add_free;
  Launch launch;
  ExecDestroy exec_destroy;
  Trim trim;
};

/* Two 256 MiB allocation nodes, the first freed in the graph: the pool reserves 512 MiB
   at launch; the second escapes (256 MiB used) until the program frees it. */
static void nodes(const struct GraphApi* api, const char* how) {
  CUgraph graph;
  CUgraphExec exec;
  CUgraphNode a, b, f;
  CUDA_MEM_ALLOC_NODE_PARAMS params;
  cudaStream_t s;
  char step[64];
  CHECK(cudaStreamCreate(&s));
  memset(&params, 0, sizeof params);
  params.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  params.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  params.poolProps.location.id = 0;
  params.bytesize = 256 * MiB;
  CHECK(cuGraphCreate(&graph, 0));
  CHECK(api->add_alloc(&a, graph, NULL, 0, &params));
  const CUdeviceptr first = params.dptr;
  CHECK(api->add_alloc(&b, graph, &a, 1, &params));
  const CUdeviceptr second = params.dptr;
  CHECK(api->add_free(&f, graph, &b, 1, first));
  CHECK(cuGraphInstantiateWithFlags(&exec, graph, 0));
  CHECK(api->launch(exec, (CUstream)s));
  snprintf(step, sizeof step, "%s launched", how);
  figures(step);
  CHECK(cudaFreeAsync((void*)second, s));
  CHECK(api->exec_destroy(exec));
  CHECK(cuGraphDestroy(graph));
  CHECK(api->trim(0));
  snprintf(step, sizeof step, "%s trimmed", how);
  figures(step);
}

static void* capture_inside(void* unused) {
  (void)unused;
  captured(1, 1);
  return NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  void* warm = NULL;
  if (strcmp(mode, "cold") != 0) CHECK(cudaMalloc(&warm, 2 * MiB)); /* a context, a device the trace knows */
  if (strcmp(mode, "inside") == 0 || strcmp(mode, "cold") == 0) {
    captured(1, 1);
  } else if (strcmp(mode, "other-thread") == 0) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, capture_inside, NULL));
    CHECK(pthread_join(t, NULL));
  } else if (strcmp(mode, "named-device") == 0) {
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 1;
    CUmemGenericAllocationHandle h = 0;
    CHECK(cuMemCreate(&h, 2 * MiB, &prop, 0));
    captured(1, 1);
    CHECK(cuMemRelease(h));
  } else if (strcmp(mode, "escape") == 0) {
    captured(0, 1);
  } else if (strcmp(mode, "held") == 0) {
    void* peak = NULL;
    captured(1, 0);
    CHECK(cudaMalloc(&peak, 64 * MiB));
    CHECK(cudaFree(peak));
  } else if (strcmp(mode, "nested") == 0) {
    nested();
  } else if (strcmp(mode, "nodes") == 0 || strcmp(mode, "paths") == 0) {
    const struct GraphApi linked = {cuGraphAddMemAllocNode, cuGraphAddMemFreeNode, cuGraphLaunch, cuGraphExecDestroy,
                                    cuDeviceGraphMemTrim};
    nodes(&linked, "symbol");
    if (strcmp(mode, "paths") == 0) {
      void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
      const struct GraphApi by_dlsym = {
          (AddAlloc)dlsym(lib, "cuGraphAddMemAllocNode"), (AddFree)dlsym(lib, "cuGraphAddMemFreeNode"),
          (Launch)dlsym(lib, "cuGraphLaunch"), (ExecDestroy)dlsym(lib, "cuGraphExecDestroy"),
          (Trim)dlsym(lib, "cuDeviceGraphMemTrim")};
      nodes(&by_dlsym, "dlsym");
      struct GraphApi by_proc;
      CUdriverProcAddressQueryResult q;
      CHECK(cuGetProcAddress_v2("cuGraphAddMemAllocNode", (void**)&by_proc.add_alloc, 12000, 0, &q));
      CHECK(cuGetProcAddress_v2("cuGraphAddMemFreeNode", (void**)&by_proc.add_free, 12000, 0, &q));
      CHECK(cuGetProcAddress_v2("cuGraphLaunch", (void**)&by_proc.launch, 12000, 0, &q));
      CHECK(cuGetProcAddress_v2("cuGraphExecDestroy", (void**)&by_proc.exec_destroy, 12000, 0, &q));
      CHECK(cuGetProcAddress_v2("cuDeviceGraphMemTrim", (void**)&by_proc.trim, 12000, 0, &q));
      nodes(&by_proc, "cuGetProcAddress");
    }
  } else {
    return 2;
  }
  if (warm) CHECK(cudaFree(warm));
  const unsigned long long v = violations();
  printf("prohibited calls %llu\n", v);
  return failures || v != 0;
}
