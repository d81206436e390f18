// Pools' own accounts through NVTX's memory extension (nvtx3/nvToolsExtMem.h, in the CUDA
// toolkit): a pool that hands out pieces of device memory it took from CUDA declares its
// heaps (the memory it manages) and regions (the pieces it handed out), and their names.
// We see the cudaMalloc of a pool's slab; these say what is inside it (NvtxMemRecord).
//
// The extension loader (nvtxExtInit.h) finds the same injection library as the core
// (NVTX_INJECTION64_PATH: this one under `cumemtrace run`) and calls its
// InitializeInjectionNvtxExtension once per extension module and NVTX instance; the tool
// writes its functions into the module's slots, by callback id (NVTX3EXT_CBID_*). We fill
// the memory module's heap and region slots (ids 0-6). When `run` chained a tool
// (CUMEMTRACE_NVTX_CHAIN, nvtx.cpp), its initializer runs first and each slot it filled is
// called from ours after we record, with its return value (a heap handle) given to the
// program; the permission slots (7-12) stay the tool's. Region handles are the regions'
// addresses (the header allows a tool to choose them); a chained tool's own handles are
// mapped back to addresses here. No CUDA call; any thread, during a capture too.
#include <nvtx3/nvToolsExtMem.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

#include "api/nvtx_shared.h"
#include "track/tracker.h"

namespace cumemtrace::interpose {
namespace {

using format::NvtxMemOp;

constexpr int kMemSlots = NVTX3EXT_CBID_nvtxMemRegionsName + 1;  // the slots we fill: 0-6
std::atomic<void*> g_mem_next[kMemSlots];                        // the chained tool's, by callback id

template <class Fn>
Fn tool_fn(int id) {
  return reinterpret_cast<Fn>(g_mem_next[id].load(std::memory_order_acquire));
}

// Our heap handles, when no tool gives one: never 0 (the process-wide heap) nor -1 (no tool).
std::atomic<uintptr_t> g_heap_ids{1};

// A chained tool's region handles that are not the region's address, to the address, until
// the region's unregister. Bounded: past it a handle names no region (the reader counts the
// reference as unknown, and the trace how many: a Bounded record).
constexpr size_t kMaxHandles = 1 << 16;
std::mutex g_handles_mu;
std::unordered_map<uint64_t, uint64_t>* g_handles = nullptr;  // under g_handles_mu; never freed

// The address a region reference names. A handle a chained tool gave is looked up, and with
// `forget` (the region's unregister) forgotten: a tool may give it again to another region.
uint64_t address_of(uint32_t ref_type, nvtxMemRegionRef_t ref, bool forget = false) {
  const uint64_t given = bits(ref.pointer);
  if (ref_type != NVTX_MEM_REGION_REF_TYPE_HANDLE) return given;
  std::lock_guard lock(g_handles_mu);
  if (!g_handles) return given;
  const auto it = g_handles->find(given);
  if (it == g_handles->end()) return given;
  const uint64_t address = it->second;
  if (forget) g_handles->erase(it);
  return address;
}
void remember_handle(uint64_t handle, uint64_t address) {
  std::lock_guard lock(g_handles_mu);
  if (!g_handles) g_handles = new std::unordered_map<uint64_t, uint64_t>;
  if (auto it = g_handles->find(handle); it != g_handles->end()) it->second = address;  // a handle given again
  else if (g_handles->size() < kMaxHandles) g_handles->emplace(handle, address);
  else track_bounded(format::BoundedWhat::kRegionHandles, kMaxHandles);
}

NvtxMemDraft draft(NvtxMemOp op, uint64_t heap, uint64_t address = 0, uint64_t size = 0) {
  return {op, heap, address, size, 0, {}};
}

// A batch's element `i`, its stride the program's (elements may grow in later versions).
template <class T>
const T* element(const void* base, size_t stride, size_t i) {
  if (!base || stride < sizeof(T)) return nullptr;
  return reinterpret_cast<const T*>(static_cast<const char*>(base) + i * stride);
}
// Whether `size` bytes of a struct reach past `field`: older, shorter structs lack it.
#define HAS_FIELD(desc, type, field) ((desc)->structSize >= offsetof(type, field) + sizeof((desc)->field))

// Records a batch in pieces of kPiece, each piece with the caller's stacks when `stacks`.
class Drafts {
 public:
  explicit Drafts(bool stacks) : stacks_(stacks) {}
  ~Drafts() { flush(); }
  void add(const NvtxMemDraft& d) {
    d_[n_++] = d;
    if (n_ == kPiece) flush();
  }
  // `d`, whose name is copied here when `copy_name` (a wide name decoded into the caller's
  // room, nvtx_shared.h), to be read when the piece is recorded.
  void add(NvtxMemDraft d, bool copy_name) {
    if (copy_name) {
      names_[n_].assign(d.name);
      d.name = names_[n_];
    }
    add(d);
  }

 private:
  void flush() {
    track_nvtx_mem(d_, n_, stacks_);
    n_ = 0;
  }
  static constexpr size_t kPiece = 64;
  NvtxMemDraft d_[kPiece];
  std::string names_[kPiece];
  size_t n_ = 0;
  bool stacks_;
};

nvtxMemHeapHandle_t heap_register(nvtxDomainHandle_t domain, const nvtxMemHeapDesc_t* desc) {
  nvtxMemHeapHandle_t h = nullptr;
  if (auto f = tool_fn<nvtxMemHeapHandle_t (*)(nvtxDomainHandle_t, const nvtxMemHeapDesc_t*)>(0)) h = f(domain, desc);
  // -1 is NVTX_MEM_HEAP_HANDLE_NO_TOOL, whose macro is a static_cast C++ refuses.
  if (!h || h == reinterpret_cast<nvtxMemHeapHandle_t>(intptr_t(-1)))
    h = reinterpret_cast<nvtxMemHeapHandle_t>(g_heap_ids.fetch_add(1, std::memory_order_relaxed));
  NvtxMemDraft d = draft(NvtxMemOp::kHeapRegister, bits(h));
  WideName wide;  // a wide name in UTF-8, read by d.name
  if (desc) {
    if (HAS_FIELD(desc, nvtxMemHeapDesc_t, typeSpecificDesc) && desc->type == NVTX_MEM_TYPE_VIRTUAL_ADDRESS &&
        desc->typeSpecificDesc && desc->typeSpecificDescSize >= sizeof(nvtxMemVirtualRangeDesc_t)) {
      const auto* range = static_cast<const nvtxMemVirtualRangeDesc_t*>(desc->typeSpecificDesc);
      d.address = bits(range->ptr);
      d.size = range->size;
    }
    if (HAS_FIELD(desc, nvtxMemHeapDesc_t, usage)) d.usage = uint8_t(desc->usage);
    if (HAS_FIELD(desc, nvtxMemHeapDesc_t, message))
      d.name = nvtx_message(int32_t(desc->messageType), desc->message, wide);
  }
  track_nvtx_mem(&d, 1, true);
  return h;
}

void heap_unregister(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap) {
  const NvtxMemDraft d = draft(NvtxMemOp::kHeapUnregister, bits(heap));
  track_nvtx_mem(&d, 1, false);
  if (auto f = tool_fn<void (*)(nvtxDomainHandle_t, nvtxMemHeapHandle_t)>(1)) f(domain, heap);
}

void heap_reset(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap) {
  const NvtxMemDraft d = draft(NvtxMemOp::kHeapReset, bits(heap));
  track_nvtx_mem(&d, 1, false);
  if (auto f = tool_fn<void (*)(nvtxDomainHandle_t, nvtxMemHeapHandle_t)>(2)) f(domain, heap);
}

void regions_register(nvtxDomainHandle_t domain, const nvtxMemRegionsRegisterBatch_t* b) {
  // The tool first: it may write its own handles, which we then map to addresses.
  const auto f = tool_fn<void (*)(nvtxDomainHandle_t, const nvtxMemRegionsRegisterBatch_t*)>(3);
  if (f) f(domain, b);
  if (!b || !HAS_FIELD(b, nvtxMemRegionsRegisterBatch_t, regionHandleElementsOut) ||
      b->regionType != NVTX_MEM_TYPE_VIRTUAL_ADDRESS)
    return;
  const uint64_t heap = bits(b->heap);
  Drafts drafts(true);
  for (size_t i = 0; i < b->regionCount; ++i) {
    const auto* r = element<nvtxMemVirtualRangeDesc_t>(b->regionDescElements, b->regionDescElementSize, i);
    if (!r) break;
    const uint64_t address = bits(r->ptr);
    if (b->regionHandleElementsOut) {
      nvtxMemRegionHandle_t& out = b->regionHandleElementsOut[i];
      if (!f) out = reinterpret_cast<nvtxMemRegionHandle_t>(const_cast<void*>(r->ptr));
      else if (bits(out) != address) remember_handle(bits(out), address);
    }
    drafts.add(draft(NvtxMemOp::kRegionRegister, heap, address, r->size));
  }
}

void regions_resize(nvtxDomainHandle_t domain, const nvtxMemRegionsResizeBatch_t* b) {
  if (b && HAS_FIELD(b, nvtxMemRegionsResizeBatch_t, regionDescElements) &&
      b->regionType == NVTX_MEM_TYPE_VIRTUAL_ADDRESS) {
    Drafts drafts(false);
    for (size_t i = 0; i < b->regionDescCount; ++i) {
      const auto* r = element<nvtxMemVirtualRangeDesc_t>(b->regionDescElements, b->regionDescElementSize, i);
      if (!r) break;
      drafts.add(draft(NvtxMemOp::kRegionResize, 0, bits(r->ptr), r->size));
    }
  }
  if (auto f = tool_fn<void (*)(nvtxDomainHandle_t, const nvtxMemRegionsResizeBatch_t*)>(4)) f(domain, b);
}

void regions_unregister(nvtxDomainHandle_t domain, const nvtxMemRegionsUnregisterBatch_t* b) {
  if (b && HAS_FIELD(b, nvtxMemRegionsUnregisterBatch_t, refElements)) {
    Drafts drafts(false);
    for (size_t i = 0; i < b->refCount; ++i) {
      const auto* r = element<nvtxMemRegionRef_t>(b->refElements, b->refElementSize, i);
      if (!r) break;
      drafts.add(draft(NvtxMemOp::kRegionUnregister, 0, address_of(b->refType, *r, true)));
    }
  }
  if (auto f = tool_fn<void (*)(nvtxDomainHandle_t, const nvtxMemRegionsUnregisterBatch_t*)>(5)) f(domain, b);
}

void regions_name(nvtxDomainHandle_t domain, const nvtxMemRegionsNameBatch_t* b) {
  if (b && HAS_FIELD(b, nvtxMemRegionsNameBatch_t, regionElements)) {
    Drafts drafts(false);
    for (size_t i = 0; i < b->regionCount; ++i) {
      const auto* r = element<nvtxMemRegionNameDesc_t>(b->regionElements, b->regionElementSize, i);
      if (!r) break;
      NvtxMemDraft d = draft(NvtxMemOp::kRegionName, 0, address_of(r->regionRefType, r->region));
      WideName wide;
      d.name = nvtx_message(int32_t(r->nameType), r->name, wide);
      drafts.add(d, int32_t(r->nameType) == NVTX_MESSAGE_TYPE_UNICODE);
    }
  }
  if (auto f = tool_fn<void (*)(nvtxDomainHandle_t, const nvtxMemRegionsNameBatch_t*)>(6)) f(domain, b);
}

template <class F>
intptr_t slot_of(F f) {
  return reinterpret_cast<intptr_t>(f);
}
const intptr_t kOurs[kMemSlots] = {
    slot_of(heap_register),  slot_of(heap_unregister),    slot_of(heap_reset),   slot_of(regions_register),
    slot_of(regions_resize), slot_of(regions_unregister), slot_of(regions_name),
};

using ExtInitFn = int (*)(nvtxExtModuleInfo_t*);
ExtInitFn chained_ext_init() {
  static const ExtInitFn fn = reinterpret_cast<ExtInitFn>(nvtx_chained_entry("InitializeInjectionNvtxExtension"));
  return fn;
}

}  // namespace

void nvtx_mem_prepare_fork() { g_handles_mu.lock(); }
void nvtx_mem_after_fork() { g_handles_mu.unlock(); }

}  // namespace cumemtrace::interpose

using namespace cumemtrace::interpose;

// Called once per extension module and NVTX instance. Fills the memory extension's slots
// of the one version whose structs we read (NVTX_EXT_COMPATID_MEM 0x0102) and returns 1
// (0 would turn them off); another module, or another version, gets what a chained tool
// made of it, or nothing.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t* info) {
  if (!info) return 1;
  nvtxExtModuleSegment_t* seg = nullptr;
  if (info->moduleId == NVTX_EXT_MODULEID_MEM && info->compatId == NVTX_EXT_COMPATID_MEM && info->segments)
    for (size_t s = 0; s < info->segmentsCount; ++s)
      if (info->segments[s].segmentId == 1 && info->segments[s].slotCount >= size_t(kMemSlots) &&
          info->segments[s].functionSlots)
        seg = &info->segments[s];
  int tool_ok = 1;
  if (const ExtInitFn tool = chained_ext_init()) tool_ok = tool(info);
  if (!seg) return tool_ok;  // not ours to fill: as the tool alone would have it
  for (int id = 0; id < kMemSlots; ++id) {
    intptr_t& slot = seg->functionSlots[id];
    if (tool_ok && slot != NVTX_EXTENSION_FRESH && slot != NVTX_EXTENSION_DISABLED && slot != kOurs[id]) {
      void* expected = nullptr;
      g_mem_next[id].compare_exchange_strong(expected, reinterpret_cast<void*>(slot), std::memory_order_acq_rel);
    }
    slot = kOurs[id];
  }
  return 1;
}
