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
//
// NVTX serves one injection library. When a tool (Nsight Systems, compute-sanitizer) has
// set NVTX_INJECTION64_PATH already, `cumemtrace run` points it at us and hands the tool's
// on in CUMEMTRACE_NVTX_CHAIN: each instance's InitializeInjectionNvtx2 runs the tool's
// first, which fills the slots it wants, and then puts ours in, each of which records and
// then calls the tool's function, whose return value (a depth, a range id) the program
// gets: the tool sees every call as it would alone. Registered strings stay the tool's
// then: a mark whose message is one is named "(registered string)".
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/loader_lock.h"
#include "base/log.h"
#include "base/utf8.h"
#include "track/named_stack.h"
#include "api/nvtx.h"
#include "api/nvtx_shared.h"
#include "resolve/resolve.h"
#include "track/tracker.h"

namespace cumemtrace::interpose {
namespace {

using format::MarkSource;

// A thread's open push ranges, one stack per domain, whatever the instance: NVTX nests pushes
// per domain (nvToolsExt.h: a push's level "is scoped to the domain"; nvtxRangePushA's is the
// default domain's, null), so a pop in one domain closes that domain's innermost push even
// when another domain's opened after it. A thread pushes in few domains (at most
// kMaxDomains + 1: domain_create), so a scan.
class DomainStacks {
 public:
  NamedStack& of(nvtxDomainHandle_t d) {
    for (auto& [domain, stack] : stacks_)
      if (domain == d) return stack;
    return stacks_.emplace_back(d, NamedStack{}).second;
  }

 private:
  std::vector<std::pair<nvtxDomainHandle_t, NamedStack>> stacks_;
};
struct PushesTag;
// This thread's open pushes in `d`; null at the thread's end (named_stack.h).
NamedStack* pushes(nvtxDomainHandle_t d) {
  DomainStacks* s = ThisThread<PushesTag, DomainStacks>::stack();
  return s ? &s->of(d) : nullptr;
}

// Every NVTX callback slot we fill, declared once: our slot, whether it is in NVTX's CORE2
// module (else CORE), its callback id there, our function (defined below).
#define CUMEMTRACE_NVTX_SLOTS(X)                                          \
  X(kPushA, false, NVTX_CBID_CORE_RangePushA, push_a)                     \
  X(kPushW, false, NVTX_CBID_CORE_RangePushW, push_w)                     \
  X(kPushEx, false, NVTX_CBID_CORE_RangePushEx, push_ex)                  \
  X(kPop, false, NVTX_CBID_CORE_RangePop, pop)                            \
  X(kMarkA, false, NVTX_CBID_CORE_MarkA, mark_a)                          \
  X(kMarkW, false, NVTX_CBID_CORE_MarkW, mark_w)                          \
  X(kMarkEx, false, NVTX_CBID_CORE_MarkEx, mark_ex)                       \
  X(kStartA, false, NVTX_CBID_CORE_RangeStartA, start_a)                  \
  X(kStartW, false, NVTX_CBID_CORE_RangeStartW, start_w)                  \
  X(kStartEx, false, NVTX_CBID_CORE_RangeStartEx, start_ex)               \
  X(kEnd, false, NVTX_CBID_CORE_RangeEnd, end)                            \
  X(kDomainPush, true, NVTX_CBID_CORE2_DomainRangePushEx, domain_push)    \
  X(kDomainPop, true, NVTX_CBID_CORE2_DomainRangePop, domain_pop)         \
  X(kDomainMark, true, NVTX_CBID_CORE2_DomainMarkEx, domain_mark)         \
  X(kDomainStart, true, NVTX_CBID_CORE2_DomainRangeStartEx, domain_start) \
  X(kDomainEnd, true, NVTX_CBID_CORE2_DomainRangeEnd, domain_end)         \
  X(kDomainCreateA, true, NVTX_CBID_CORE2_DomainCreateA, domain_create_a) \
  X(kDomainCreateW, true, NVTX_CBID_CORE2_DomainCreateW, domain_create_w)

// The chained tool's function for each slot we fill (null: none, or no tool).
enum Slot {
#define CUMEMTRACE_NVTX_SLOT_ENUM(slot, core2, id, fn) slot,
  CUMEMTRACE_NVTX_SLOTS(CUMEMTRACE_NVTX_SLOT_ENUM)
#undef CUMEMTRACE_NVTX_SLOT_ENUM
      kSlotCount
};
std::atomic<void*> g_next[kSlotCount];

template <class Fn>
Fn next(Slot slot) {
  return reinterpret_cast<Fn>(g_next[slot].load(std::memory_order_acquire));
}

// An event's message; a wide one is decoded into `wide`, which must outlive the view.
std::string_view message_of(const nvtxEventAttributes_t* a, WideName& wide) {
  return a ? nvtx_message(a->messageType, a->message, wide) : std::string_view();
}

// Each function records, then calls the chained tool's (nvtx.h: CUMEMTRACE_NVTX_CHAIN),
// whose return value the program gets; without a tool, what NVTX itself would return.
int push_named(nvtxDomainHandle_t d, std::string name) {
  NamedStack* s = pushes(d);
  if (!s) return 0;  // the thread's end: not recorded (named_stack.h)
  track_mark(name, MarkSource::kNvtxPush);
  return int(s->push(std::move(name)));
}
// The pop's RangeEnd record, named after the push it closes; the level of the range it
// ended, as nvToolsExt.h specifies (0 for the outermost; -1 with no range open in `d`).
int pop_named(nvtxDomainHandle_t d) {
  const std::string* name;
  NamedStack* s = pushes(d);
  if (!s || !s->pop(name)) return -1;
  if (name) track_mark(*name, MarkSource::kNvtxPop);
  else track_bounded(format::BoundedWhat::kPushNames, NamedStack::kMaxNamed);
  return int(s->depth());
}
int push_a(const char* message) {
  const int depth = push_named(nullptr, message ? message : "");
  if (auto f = next<int (*)(const char*)>(kPushA)) return f(message);
  return depth;
}
int push_w(const wchar_t* message) {
  WideName wide;
  const int depth = push_named(nullptr, std::string(utf8_of(message, wide)));
  if (auto f = next<int (*)(const wchar_t*)>(kPushW)) return f(message);
  return depth;
}
int push_ex(const nvtxEventAttributes_t* a) {
  WideName wide;
  const int depth = push_named(nullptr, std::string(message_of(a, wide)));
  if (auto f = next<int (*)(const nvtxEventAttributes_t*)>(kPushEx)) return f(a);
  return depth;
}
int pop() {
  const int depth = pop_named(nullptr);
  if (auto f = next<int (*)()>(kPop)) return f();
  return depth;
}
void mark_a(const char* message) {
  track_mark(message ? message : "", MarkSource::kNvtxMark);
  if (auto f = next<void (*)(const char*)>(kMarkA)) f(message);
}
void mark_w(const wchar_t* message) {
  WideName wide;
  track_mark(utf8_of(message, wide), MarkSource::kNvtxMark);
  if (auto f = next<void (*)(const wchar_t*)>(kMarkW)) f(message);
}
void mark_ex(const nvtxEventAttributes_t* a) {
  WideName wide;
  track_mark(message_of(a, wide), MarkSource::kNvtxMark);
  if (auto f = next<void (*)(const nvtxEventAttributes_t*)>(kMarkEx)) f(a);
}

std::atomic<uint64_t> g_range_ids{1};
// Open start/end ranges by the id the program holds (ours, or the chained tool's; any thread
// may end one): bounded, an end beyond it names none (counted: a Bounded record).
constexpr size_t kMaxOpen = 4096;
// Held across a fork (nvtx_prepare_fork): any program thread may hold it, and a child
// made meanwhile hung on its first range (test/integration/programs/lifecycle/fork_nvtx_threads.c).
std::mutex g_open_mu;
std::unordered_map<uint64_t, std::string>* g_open = nullptr;  // under g_open_mu; never freed: used until exit
std::unordered_map<uint64_t, std::string>& open_ranges() {
  if (!g_open) g_open = new std::unordered_map<uint64_t, std::string>;
  return *g_open;
}
// A start or end allocates and frees only under the open ranges' lock or the tracker's,
// both held across a fork: a child then never inherits an allocator that is not fork-safe
// (GCC 12's AddressSanitizer's) locked by a thread inside one of these. Lock order: this
// lock, then the tracker's (track_mark).
nvtxRangeId_t remember_open(nvtxRangeId_t id, std::string_view name) {
  std::lock_guard lock(g_open_mu);
  if (open_ranges().size() < kMaxOpen) open_ranges().emplace(id, std::string(name));
  else track_bounded(format::BoundedWhat::kOpenRangeIds, kMaxOpen);
  return id;
}
void record_end(nvtxRangeId_t id) {
  std::lock_guard lock(g_open_mu);
  auto it = open_ranges().find(id);
  if (it == open_ranges().end()) return;
  track_mark(it->second, MarkSource::kNvtxEnd);
  open_ranges().erase(it);
}
// A range started by `name`: marked, then given the chained tool's id (its function in
// `slot` called with `args`) or one of ours, and kept open under that id for its end.
template <class... Args>
nvtxRangeId_t start_named(std::string_view name, Slot slot, Args... args) {
  track_mark(name, MarkSource::kNvtxStart);
  auto f = next<nvtxRangeId_t (*)(Args...)>(slot);
  return remember_open(f ? f(args...) : g_range_ids.fetch_add(1, std::memory_order_relaxed), name);
}
nvtxRangeId_t start_a(const char* message) { return start_named(message ? message : "", kStartA, message); }
nvtxRangeId_t start_w(const wchar_t* message) {
  WideName wide;
  return start_named(utf8_of(message, wide), kStartW, message);
}
nvtxRangeId_t start_ex(const nvtxEventAttributes_t* a) {
  WideName wide;
  return start_named(message_of(a, wide), kStartEx, a);
}
void end(nvtxRangeId_t id) {
  record_end(id);
  if (auto f = next<void (*)(nvtxRangeId_t)>(kEnd)) f(id);
}

int domain_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  WideName wide;
  const int depth = push_named(d, std::string(message_of(a, wide)));
  if (auto f = next<int (*)(nvtxDomainHandle_t, const nvtxEventAttributes_t*)>(kDomainPush)) return f(d, a);
  return depth;
}
int domain_pop(nvtxDomainHandle_t d) {
  const int depth = pop_named(d);
  if (auto f = next<int (*)(nvtxDomainHandle_t)>(kDomainPop)) return f(d);
  return depth;
}
void domain_mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  WideName wide;
  track_mark(message_of(a, wide), MarkSource::kNvtxMark);
  if (auto f = next<void (*)(nvtxDomainHandle_t, const nvtxEventAttributes_t*)>(kDomainMark)) f(d, a);
}
nvtxRangeId_t domain_start(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  WideName wide;
  return start_named(message_of(a, wide), kDomainStart, d, a);
}
void domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  record_end(id);
  if (auto f = next<void (*)(nvtxDomainHandle_t, nvtxRangeId_t)>(kDomainEnd)) f(d, id);
}
// A domain's handle, so that pushes nest per domain: without a tool's DomainCreateA NVTX
// (or DomainCreateW) NVTX gives every domain null, the default domain's. One handle per name, whichever NVTX instance
// (library) creates it, as a tool sees domains by name; at most kMaxDomains, past which a
// domain is the default one to us (counted: push_domains). A chained tool's handles are its
// own; a tool that gives none (it has no DomainCreateA or DomainCreateW) gets null, as it
// would alone.
constexpr size_t kMaxDomains = 4096;
std::mutex g_domains_mu;                                          // held across a fork, as g_open_mu
std::unordered_map<std::string, uintptr_t>* g_domains = nullptr;  // under g_domains_mu; never freed
nvtxDomainHandle_t domain_named(const std::string& key) {
  if (g_chained.load(std::memory_order_relaxed)) return nullptr;
  std::lock_guard lock(g_domains_mu);
  if (!g_domains) g_domains = new std::unordered_map<std::string, uintptr_t>;
  if (auto it = g_domains->find(key); it != g_domains->end()) return reinterpret_cast<nvtxDomainHandle_t>(it->second);
  if (g_domains->size() >= kMaxDomains) {
    track_bounded(format::BoundedWhat::kPushDomains, kMaxDomains);
    return nullptr;
  }
  const uintptr_t handle = g_domains->size() + 1;  // never 0, the default domain
  g_domains->emplace(key, handle);
  return reinterpret_cast<nvtxDomainHandle_t>(handle);
}
nvtxDomainHandle_t domain_create_a(const char* name) {
  if (auto f = next<nvtxDomainHandle_t (*)(const char*)>(kDomainCreateA)) return f(name);
  return domain_named(name ? name : "");
}
// A wide name is the same domain as its UTF-8 spelling through nvtxDomainCreateA (utf8_of).
nvtxDomainHandle_t domain_create_w(const wchar_t* name) {
  if (auto f = next<nvtxDomainHandle_t (*)(const wchar_t*)>(kDomainCreateW)) return f(name);
  WideName wide;
  return domain_named(std::string(utf8_of(name, wide)));
}

// A registered string lives as long as the process: its handle is a copy we never free,
// kept in kMaxStrings slots so that a message is read only through a handle we gave (a
// program may pass any value as one, and reading through a bad one kills the program). Past
// the slots a string is registered but its messages read "(registered string)".
constexpr size_t kMaxStrings = 4096;
std::atomic<const char*> g_strings[kMaxStrings];
std::atomic<size_t> g_string_count{0};
nvtxStringHandle_t register_string(nvtxDomainHandle_t, const char* s) {
  // Past the slots every string gets this one handle: not ours, so never read, and no copy
  // is made that no slot would keep (LeakSanitizer found those).
  static const char kPastSlots[] = "";
  const size_t at = g_string_count.fetch_add(1, std::memory_order_relaxed);
  if (at >= kMaxStrings) {
    track_bounded(format::BoundedWhat::kRegisteredStrings, kMaxStrings);
    return reinterpret_cast<nvtxStringHandle_t>(const_cast<char*>(kPastSlots));
  }
  const char* copy = strdup(s ? s : "");
  if (copy) g_strings[at].store(copy, std::memory_order_release);
  return reinterpret_cast<nvtxStringHandle_t>(const_cast<char*>(copy));
}
// A wide string is kept in UTF-8, so its messages read as a narrow one's (utf8_of).
nvtxStringHandle_t register_string_w(nvtxDomainHandle_t d, const wchar_t* s) {
  WideName wide;
  utf8_of(s, wide);
  return register_string(d, wide.bytes);
}
bool ours(const void* handle) {
  const size_t n = std::min(g_string_count.load(std::memory_order_acquire), kMaxStrings);
  for (size_t i = 0; i < n; ++i)
    if (g_strings[i].load(std::memory_order_acquire) == handle) return true;
  return false;
}

// Our function into slot `id`; where the chained tool's initialization changed that slot,
// its function is the one ours calls on. (A slot it left holds NVTX's own initializing
// stub, which must never be called from ours: it would come back here.)
void fill(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer fn, Slot slot,
          NvtxFunctionPointer before) {
  if (!table || id >= size || !table[id]) return;
  if (*table[id] != before && *table[id] != fn) {
    void* expected = nullptr;
    g_next[slot].compare_exchange_strong(expected, reinterpret_cast<void*>(*table[id]), std::memory_order_acq_rel);
  }
  *table[id] = fn;
}

// Where each slot of ours goes: NVTX's CORE or CORE2 module, callback id, our function.
struct SlotInfo {
  bool core2;
  unsigned id;
  NvtxFunctionPointer ours;
};
template <class F>
NvtxFunctionPointer fp(F f) {
  return reinterpret_cast<NvtxFunctionPointer>(f);
}
const SlotInfo kSlotInfo[kSlotCount] = {
#define CUMEMTRACE_NVTX_SLOT_INFO(slot, core2, id, fn) {core2, id, fp(fn)},
    CUMEMTRACE_NVTX_SLOTS(CUMEMTRACE_NVTX_SLOT_INFO)
#undef CUMEMTRACE_NVTX_SLOT_INFO
};

NvtxFunctionPointer slot_value(NvtxFunctionTable table, unsigned size, unsigned id) {
  return table && id < size && table[id] ? *table[id] : nullptr;
}

using InitFn = int (*)(NvtxGetExportTableFunc_t);

// The tool's InitializeInjectionNvtx2 (nvtx_shared.h: nvtx_chained_library), once.
InitFn chained_init() {
  static const InitFn fn = reinterpret_cast<InitFn>(nvtx_chained_entry("InitializeInjectionNvtx2"));
  return fn;
}

}  // namespace

std::atomic<bool> g_chained{false};

std::string_view utf8_of(const wchar_t* s, WideName& out) {
  size_t n = 0;
  for (size_t i = 0; s && s[i]; ++i) {
    uint32_t c = uint32_t(s[i]);
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
    if (!put_utf8(c, out.bytes, kMaxNameBytes, n)) break;  // the next character does not fit
  }
  out.bytes[n] = '\0';
  return std::string_view(out.bytes, n);
}

// The message of an event attribute or a name: ASCII, wide, or a string registered with
// nvtxDomainRegisterStringA or W (whose handle is our own UTF-8 copy of it).
std::string_view nvtx_message(int32_t type, const nvtxMessageValue_t& value, WideName& wide) {
  switch (type) {
    case NVTX_MESSAGE_TYPE_ASCII: return value.ascii ? std::string_view(value.ascii) : "";
    case NVTX_MESSAGE_TYPE_UNICODE: return utf8_of(value.unicode, wide);
    case NVTX_MESSAGE_TYPE_REGISTERED:
      if (g_chained.load(std::memory_order_relaxed) || !value.registered || !ours(value.registered))
        return "(registered string)";  // the tool's handle, or none of ours
      return std::string_view(reinterpret_cast<const char*>(value.registered));
    default: return {};  // a type of a later NVTX: not decoded
  }
}

void* nvtx_chained_entry(const char* name) {
  static void* const lib = []() -> void* {
    const char* path = std::getenv("CUMEMTRACE_NVTX_CHAIN");
    if (!path || !*path) return nullptr;
    void* l;
    {
      const LoaderUse in_loader;  // a fork meanwhile must not copy the loader's lock held
      l = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    }
    if (!l) log_warn("NVTX: cannot load {} (the tool NVTX_INJECTION64_PATH named): it sees no NVTX call", path);
    return l;
  }();
  if (!lib) return nullptr;
  void* fn = real_dlsym()(lib, name);
  if (fn && fn == real_dlsym()(RTLD_DEFAULT, name)) fn = nullptr;  // ours: CUMEMTRACE_NVTX_CHAIN named us
  const char* tool = std::getenv("CUMEMTRACE_NVTX_CHAIN");
  if (fn) log_info("NVTX: chained to {}'s {}: it sees those NVTX calls, and the trace has them", tool, name);
  else log_warn("NVTX: cannot chain to {}: it has no {} of its own, and sees none of those NVTX calls", tool, name);
  return fn;
}

void nvtx_prepare_fork() {
  g_open_mu.lock();
  g_domains_mu.lock();
  nvtx_mem_prepare_fork();
}
void nvtx_after_fork_parent() {
  nvtx_mem_after_fork();
  g_domains_mu.unlock();
  g_open_mu.unlock();
}
void nvtx_after_fork_child() {  // the forking thread took them: ours in the child
  nvtx_mem_after_fork();
  g_domains_mu.unlock();
  g_open_mu.unlock();
}

void warn_if_nvtx_elsewhere() {
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  if (!path || !*path) return;
  Dl_info self{};
  char* mine = dladdr(reinterpret_cast<const void*>(&warn_if_nvtx_elsewhere), &self) && self.dli_fname
                   ? realpath(self.dli_fname, nullptr)
                   : nullptr;
  char* named = realpath(path, nullptr);
  if (!mine || !named || std::strcmp(mine, named) != 0)
    log_warn(
        "NVTX_INJECTION64_PATH names another tool ({}): NVTX ranges and marks do not reach the trace "
        "(`cumemtrace run` chains to a tool set before it)",
        path);
  std::free(mine);
  std::free(named);
}

}  // namespace cumemtrace::interpose

using namespace cumemtrace::interpose;

// Called once per NVTX instance; idempotent. Returns 1 (success): 0 would make NVTX
// unload this library, the tracer itself.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  const auto* callbacks = get ? static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS)) : nullptr;
  if (!callbacks || !callbacks->GetModuleFunctionTable) return 1;
  NvtxFunctionTable t = nullptr, t2 = nullptr;
  unsigned n = 0, n2 = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n)) t = nullptr, n = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t2, &n2)) t2 = nullptr, n2 = 0;
  const auto table = [&](const SlotInfo& i) { return i.core2 ? t2 : t; };
  const auto size = [&](const SlotInfo& i) { return i.core2 ? n2 : n; };
  NvtxFunctionPointer before[kSlotCount] = {};
  for (int slot = 0; slot < kSlotCount; ++slot)
    before[slot] = slot_value(table(kSlotInfo[slot]), size(kSlotInfo[slot]), kSlotInfo[slot].id);
  if (const InitFn tool = chained_init(); tool && tool(get)) g_chained.store(true, std::memory_order_relaxed);
  for (int slot = 0; slot < kSlotCount; ++slot) {
    const SlotInfo& i = kSlotInfo[slot];
    fill(table(i), size(i), i.id, i.ours, Slot(slot), before[slot]);
  }
  // Strings the program registers are the tool's when one is chained (its callbacks read them).
  if (!g_chained.load(std::memory_order_relaxed) && t2 && NVTX_CBID_CORE2_DomainRegisterStringA < n2 &&
      t2[NVTX_CBID_CORE2_DomainRegisterStringA])
    *t2[NVTX_CBID_CORE2_DomainRegisterStringA] = reinterpret_cast<NvtxFunctionPointer>(register_string);
  if (!g_chained.load(std::memory_order_relaxed) && t2 && NVTX_CBID_CORE2_DomainRegisterStringW < n2 &&
      t2[NVTX_CBID_CORE2_DomainRegisterStringW])
    *t2[NVTX_CBID_CORE2_DomainRegisterStringW] = reinterpret_cast<NvtxFunctionPointer>(register_string_w);
  return 1;
}
