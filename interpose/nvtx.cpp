// NVTX ranges and marks into the trace, without Nsight: NVTX's documented injection
// (NVIDIA/NVTX, nvtxInit.h): on its first call, each NVTX instance (every library that
// includes the nvtx3 headers has its own: PyTorch, cuDNN, NCCL, the program) dlopen()s
// the library named by NVTX_INJECTION64_PATH — `cumemtrace run` points it at this one,
// already loaded, so no second copy comes — and calls its InitializeInjectionNvtx2, which
// fills the callback slots it wants. A range push or a range start becomes a mark named
// after the range (the start of an iteration: torch.cuda.nvtx.range_push("step")); a mark
// becomes a mark; a pop or an end becomes a RangeEnd record named after the range it closes
// (the end of that iteration; readers before format 1.10 skip it and see the marks alone).
// No CUDA call, no lock beyond the tracker's and the open start/end ranges' own; may run
// in any thread, during a capture too.
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "tracker.h"

namespace cumemtrace::interpose {
namespace {

using format::MarkSource;

thread_local int t_depth;  // this thread's open push ranges, whatever the instance
// The names of this thread's innermost open push ranges (so that a pop can name the
// range it closes); bounded: a deeper push is counted but its pop names no range.
constexpr size_t kMaxNamed = 64;
thread_local std::vector<std::string> t_names;

// The message of an event attribute: ASCII, or a string registered with
// nvtxDomainRegisterStringA (whose handle is our own copy of it).
std::string message_of(const nvtxEventAttributes_t* a) {
  if (!a) return {};
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii ? a->message.ascii : "";
    case NVTX_MESSAGE_TYPE_REGISTERED:
      return a->message.registered ? reinterpret_cast<const char*>(a->message.registered) : "";
    default: return {};  // wide strings: not decoded
  }
}

int push_named(std::string name) {
  track_mark(name, MarkSource::kNvtxPush);
  if (size_t(t_depth) < kMaxNamed) t_names.resize(size_t(t_depth)), t_names.push_back(std::move(name));
  return t_depth++;
}
int push_a(const char* message) { return push_named(message ? message : ""); }
int push_ex(const nvtxEventAttributes_t* a) { return push_named(message_of(a)); }
int pop() {
  if (t_depth <= 0) return -1;
  const size_t closed = size_t(--t_depth);
  if (closed < t_names.size()) track_mark(t_names[closed], MarkSource::kNvtxPop);
  return t_depth + 1;
}
void mark_a(const char* message) { track_mark(message ? message : "", MarkSource::kNvtxMark); }
void mark_ex(const nvtxEventAttributes_t* a) { track_mark(message_of(a), MarkSource::kNvtxMark); }

std::atomic<uint64_t> g_range_ids{1};
// Open start/end ranges by id (any thread may end one): bounded, an end beyond it names none.
constexpr size_t kMaxOpen = 4096;
std::mutex g_open_mu;
std::unordered_map<uint64_t, std::string>& open_ranges() {
  static auto* m = new std::unordered_map<uint64_t, std::string>;  // never freed: used until exit
  return *m;
}
nvtxRangeId_t start_named(std::string name) {
  track_mark(name, MarkSource::kNvtxStart);
  const uint64_t id = g_range_ids.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(g_open_mu);
  if (open_ranges().size() < kMaxOpen) open_ranges().emplace(id, std::move(name));
  return id;
}
nvtxRangeId_t start_a(const char* message) { return start_named(message ? message : ""); }
nvtxRangeId_t start_ex(const nvtxEventAttributes_t* a) { return start_named(message_of(a)); }
void end(nvtxRangeId_t id) {
  std::string name;
  {
    std::lock_guard lock(g_open_mu);
    auto it = open_ranges().find(id);
    if (it == open_ranges().end()) return;
    name = std::move(it->second);
    open_ranges().erase(it);
  }
  track_mark(name, MarkSource::kNvtxEnd);
}

int domain_push(nvtxDomainHandle_t, const nvtxEventAttributes_t* a) { return push_ex(a); }
int domain_pop(nvtxDomainHandle_t) { return pop(); }
void domain_mark(nvtxDomainHandle_t, const nvtxEventAttributes_t* a) { mark_ex(a); }
nvtxRangeId_t domain_start(nvtxDomainHandle_t, const nvtxEventAttributes_t* a) { return start_ex(a); }
void domain_end(nvtxDomainHandle_t, nvtxRangeId_t id) { end(id); }
// A registered string lives as long as the process: its handle is a copy we never free.
nvtxStringHandle_t register_string(nvtxDomainHandle_t, const char* s) {
  return reinterpret_cast<nvtxStringHandle_t>(strdup(s ? s : ""));
}

template <class F>
void fill(NvtxFunctionTable table, unsigned size, unsigned id, F fn) {
  if (table && id < size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace
}  // namespace cumemtrace::interpose

using namespace cumemtrace::interpose;

// Called once per NVTX instance; idempotent. Returns 1 (success): 0 would make NVTX
// unload this library, the tracer itself.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  const auto* callbacks = get ? static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS)) : nullptr;
  if (!callbacks || !callbacks->GetModuleFunctionTable) return 1;
  NvtxFunctionTable t = nullptr;
  unsigned n = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n)) {
    fill(t, n, NVTX_CBID_CORE_RangePushA, push_a);
    fill(t, n, NVTX_CBID_CORE_RangePushEx, push_ex);
    fill(t, n, NVTX_CBID_CORE_RangePop, pop);
    fill(t, n, NVTX_CBID_CORE_MarkA, mark_a);
    fill(t, n, NVTX_CBID_CORE_MarkEx, mark_ex);
    fill(t, n, NVTX_CBID_CORE_RangeStartA, start_a);
    fill(t, n, NVTX_CBID_CORE_RangeStartEx, start_ex);
    fill(t, n, NVTX_CBID_CORE_RangeEnd, end);
  }
  t = nullptr, n = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n)) {
    fill(t, n, NVTX_CBID_CORE2_DomainRangePushEx, domain_push);
    fill(t, n, NVTX_CBID_CORE2_DomainRangePop, domain_pop);
    fill(t, n, NVTX_CBID_CORE2_DomainMarkEx, domain_mark);
    fill(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, domain_start);
    fill(t, n, NVTX_CBID_CORE2_DomainRangeEnd, domain_end);
    fill(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, register_string);
  }
  return 1;
}
