#include "probe/nvml.h"

#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "base/loader_lock.h"
#include "base/log.h"
#include "resolve/resolve.h"

namespace cumemtrace::interpose {
namespace {

// The subset of nvml.h we use (NVML API Reference, "Device Queries"); nvml.h itself is
// not part of the CUDA toolkit image we build on.
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlInsufficientSize = 7;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlProcessInfo_t {  // nvmlProcessInfo_v2_t, the layout _v3 queries fill
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
constexpr unsigned long long kNvmlValueNotAvailable = ~0ull;

struct Nvml {
  int (*init)();
  int (*count)(unsigned*);
  int (*by_index)(unsigned, nvmlDevice_t*);
  int (*uuid)(nvmlDevice_t, char*, unsigned);
  int (*memory)(nvmlDevice_t, nvmlMemory_t*);
  int (*processes)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*);
};

const Nvml* load_nvml() {
  const LoaderUse in_loader;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    // Once per process: the report cannot split nvidia-smi's figure without it.
    log_warn("NVML not available ({}): the trace will have no nvidia-smi figures", dlerror());
    return nullptr;
  }
  auto* n = new Nvml{};  // lives as long as the process
  const bool ok = bind_function(lib, n->init, "nvmlInit_v2") && bind_function(lib, n->count, "nvmlDeviceGetCount_v2") &&
                  bind_function(lib, n->by_index, "nvmlDeviceGetHandleByIndex_v2") &&
                  bind_function(lib, n->uuid, "nvmlDeviceGetUUID") &&
                  bind_function(lib, n->memory, "nvmlDeviceGetMemoryInfo") &&
                  bind_function(lib, n->processes, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!ok || n->init() != kNvmlSuccess) {
    log_warn("NVML found but unusable: snapshots carry no nvidia-smi figures");
    return nullptr;
  }
  return n;
}

// NVML is thread-safe; the mutex guards only our one-time load. A child forked during
// that load starts the mutex afresh (nvml_after_fork_child): it never waits on a thread
// it does not have.
std::mutex g_load_mutex;
std::atomic<bool> g_loaded{false};
const Nvml* g_nvml = nullptr;

const Nvml* nvml() {
  if (g_loaded.load(std::memory_order_acquire)) return g_nvml;
  std::lock_guard lock(g_load_mutex);
  if (!g_loaded.load(std::memory_order_relaxed)) {
    g_nvml = load_nvml();
    g_loaded.store(true, std::memory_order_release);
  }
  return g_nvml;
}

// NVML's index of the GPU with this UUID (CUDA ordinals and NVML indices differ under
// CUDA_VISIBLE_DEVICES), by enumeration: every NVML version has these three calls.
int32_t enumerate_index(const Nvml& n, const std::string& uuid) {
  unsigned count = 0;
  if (n.count(&count) != kNvmlSuccess) return -1;
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t dev = nullptr;
    char name[96] = {};
    if (n.by_index(i, &dev) == kNvmlSuccess && n.uuid(dev, name, sizeof name) == kNvmlSuccess && uuid == name)
      return static_cast<int32_t>(i);
  }
  return -1;
}

// Enumerating every GPU on each reading would cost a sampled peak on an 8-GPU node eight
// times what it must: the index of a UUID never changes while the process lives. The
// cache takes no lock (a fork must never find one held): a slot is claimed, filled, then
// published; two threads may both fill one for the same UUID, which is harmless.
struct IndexSlot {
  std::atomic<bool> ready{false};
  char uuid[64];
  int32_t index;
};
constexpr int kIndexSlots = 64;
IndexSlot g_index_slots[kIndexSlots];
std::atomic<int> g_index_used{0};

int32_t index_of(const Nvml& n, const std::string& uuid) {
  const int used = std::min(g_index_used.load(std::memory_order_acquire), kIndexSlots);
  for (int i = 0; i < used; ++i)
    if (g_index_slots[i].ready.load(std::memory_order_acquire) && uuid == g_index_slots[i].uuid)
      return g_index_slots[i].index;
  const int32_t index = enumerate_index(n, uuid);
  const int slot = g_index_used.fetch_add(1, std::memory_order_acq_rel);
  if (index >= 0 && slot < kIndexSlots && uuid.size() < sizeof g_index_slots[slot].uuid) {
    std::memcpy(g_index_slots[slot].uuid, uuid.c_str(), uuid.size() + 1);
    g_index_slots[slot].index = index;
    g_index_slots[slot].ready.store(true, std::memory_order_release);
  }
  return index;
}

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

}  // namespace

bool nvml_looked_for() { return g_loaded.load(std::memory_order_acquire); }

void nvml_after_fork_child() {
  if (!g_loaded.load(std::memory_order_relaxed)) new (&g_load_mutex) std::mutex;
}

NvmlFigures nvml_query(const std::string& uuid) {
  NvmlFigures f;
  if (!loader_usable()) return f;
  const ForeignCall foreign;  // NVML may use the loader inside (loader_lock.h)
  const Nvml* n = nvml();
  if (!n || uuid.empty()) return f;
  f.index = index_of(*n, uuid);
  nvmlDevice_t dev = nullptr;
  if (f.index < 0 || n->by_index(static_cast<unsigned>(f.index), &dev) != kNvmlSuccess) return f;
  nvmlMemory_t mem{};
  if (n->memory(dev, &mem) == kNvmlSuccess) {
    f.device_free = mem.free;
    f.device_total = mem.total;
  }
  std::vector<nvmlProcessInfo_t> procs(16);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned count = static_cast<unsigned>(procs.size());
    const int r = n->processes(dev, &count, procs.data());
    if (r == kNvmlInsufficientSize) {
      procs.resize(count + 16);
      continue;
    }
    if (r != kNvmlSuccess) break;
    f.process_used = 0;
    f.processes_known = true;
    const auto pid = static_cast<unsigned>(getpid());
    for (unsigned i = 0; i < count; ++i) {
      const bool known = procs[i].usedGpuMemory != kNvmlValueNotAvailable;
      if (procs[i].pid == pid && known) f.process_used = procs[i].usedGpuMemory;
      f.processes.push_back({procs[i].pid, 0, known ? procs[i].usedGpuMemory : format::kUnknown64});
    }
    break;
  }
  f.read_ns = monotonic_ns();
  return f;
}

}  // namespace cumemtrace::interpose
