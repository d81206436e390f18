#include "hooks/torch_trace_entries.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <typeinfo>

#include "base/errno_guard.h"
#include "base/loader_lock.h"
#include "resolve/resolve.h"
#include "stacks/walk_stats.h"

namespace cumemtrace::interpose {

// PyTorch's TraceEntry, never defined here: its fields are read at the offsets of the
// layout its version has.
struct TorchTraceEntry;

namespace {

// Where a version keeps what the tracer reads (x86-64, libstdc++): the vtable slot of
// CUDAAllocator::attachAllocatorTraceTracker (c10/cuda/CUDACachingAllocator.h: the virtual
// functions of c10::Allocator, c10::DeviceAllocator and CUDAAllocator in declaration order,
// the destructor two slots), and TraceEntry's fields (c10/core/CachingDeviceAllocator.h).
// A version is added only from its own headers, and checked on a GPU (docs/validation.md).
struct Layout {
  std::string_view version_prefix;
  unsigned attach_slot;
  size_t action, device, addr, stream, size, pool;
};
constexpr Layout kLayouts[] = {
    // 2.11: enum action_ (4 B), int8_t device_, size_t addr_, shared_ptr context_ (16 B),
    // void* stream_, size_t size_, MempoolId_t mempool_ (two u64), then time and strings.
    {"2.11.", 44, 0, 4, 8, 32, 40, 48},
};

constexpr const char* kAllocatorSymbol = "_ZN3c104cuda20CUDACachingAllocator9allocatorE";
constexpr const char* kNativeType = "N3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocatorE";

// TraceEntry::Action.
enum Action : uint32_t {
  kAlloc,
  kFreeRequested,
  kFreeCompleted,
  kSegmentAlloc,
  kSegmentFree,
  kSegmentMap,
  kSegmentUnmap,
  kSnapshot,
  kOom,
};

const Layout* g_layout = nullptr;  // set before the tracker is attached, never changed after
const BlockSourceFacts* g_source = nullptr;
std::atomic<bool> g_attached{false};

// The entry this thread's allocator call left for the usage report that follows it. Plain
// data in initial-exec TLS, as ThreadState: the tracker runs inside the allocator.
struct Stash {
  format::BlockOp op;  // kAlloc, kFree or kOom; 0 when empty
  bool pending;        // kFree: no FREE_COMPLETED of it yet
  uint64_t address, requested, stream, pool[2];
};
__thread Stash t_stash __attribute__((tls_model("initial-exec")));

template <class T>
T field(const unsigned char* e, size_t offset) {
  T v;
  std::memcpy(&v, e + offset, sizeof v);
  return v;
}

BlockDraft draft_of(const unsigned char* e, format::BlockOp op) {
  const Layout& l = *g_layout;
  BlockDraft d;
  d.op = op;
  d.address = field<uint64_t>(e, l.addr);
  d.size = field<uint64_t>(e, l.size);
  d.stream = field<uint64_t>(e, l.stream);
  d.pool[0] = field<uint64_t>(e, l.pool);
  d.pool[1] = field<uint64_t>(e, l.pool + 8);
  d.device = field<int8_t>(e, l.device);
  d.flags = format::kBlockTraceEntry;
  return d;
}

void refuse(const char* why) { refuse_block_trace_entries(*g_source, why); }

void on_trace_entry(const TorchTraceEntry& entry) {
  const PartTimer timer(HookPart::kTraceEntry);
  if (block_trace_entries_off()) return;
  const ErrnoGuard keep_errno;
  const auto* e = reinterpret_cast<const unsigned char*>(&entry);
  const auto action = field<uint32_t>(e, g_layout->action);
  Stash& s = t_stash;
  switch (action) {
    case kAlloc:
    case kFreeRequested:
    case kOom: {
      const BlockDraft d = draft_of(e, format::BlockOp::kAlloc);
      s.op = action == kAlloc ? format::BlockOp::kAlloc
             : action == kOom ? format::BlockOp::kOom
                              : format::BlockOp::kFree;
      s.pending = action == kFreeRequested;
      // OOM: addr_ holds the free bytes the driver reported, size_ the rounded request.
      s.address = action == kOom ? 0 : d.address;
      s.requested = action == kOom ? d.address : d.size;
      s.stream = d.stream, s.pool[0] = d.pool[0], s.pool[1] = d.pool[1];
      return;
    }
    case kFreeCompleted: {
      if (s.op == format::BlockOp::kFree && s.pending && s.address == field<uint64_t>(e, g_layout->addr)) {
        s.pending = false;  // freed at once: the report that follows says so
        return;
      }
      BlockDraft d = draft_of(e, format::BlockOp::kFreeCompleted);
      d.requested = d.size;  // size_ is the block's requested bytes here
      d.size = format::kUnknown64;
      track_block(d, *g_source);
      return;
    }
    case kSegmentAlloc:
    case kSegmentFree:
    case kSegmentMap:
    case kSegmentUnmap:
    case kSnapshot: {
      constexpr format::BlockOp ops[] = {format::BlockOp::kSegmentAlloc, format::BlockOp::kSegmentFree,
                                         format::BlockOp::kSegmentMap, format::BlockOp::kSegmentUnmap,
                                         format::BlockOp::kSnapshot};
      BlockDraft d = draft_of(e, ops[action - kSegmentAlloc]);
      if (action == kSnapshot) d.address = d.size = 0;
      track_block(d, *g_source);
      return;
    }
    default: refuse("an entry with an action PyTorch's header does not name: its layout is not what the tracer reads");
  }
}

// libc10_cuda.so, already loaded beside libc10.so (which defines `report_fn`).
void* c10_cuda_beside(const void* report_fn) {
  const LoaderUse in_loader;
  Dl_info info{};
  if (!report_fn || !dladdr(report_fn, &info) || !info.dli_fname) return nullptr;
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  path.replace(slash == std::string::npos ? 0 : slash + 1, std::string::npos, "libc10_cuda.so");
  return dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
}

}  // namespace

void attach_torch_trace_tracker(const void* report_fn, const BlockSourceFacts& source) {
  static std::atomic<bool> tried{false};
  // Every usage report asks: a load first, the exchange only until one wins.
  if (tried.load(std::memory_order_relaxed) || tried.exchange(true, std::memory_order_acq_rel)) return;
  if (block_trace_entries_off()) return;
  const ErrnoGuard keep_errno;
  g_source = &source;
  for (const Layout& l : kLayouts)
    if (source.version.starts_with(l.version_prefix)) g_layout = &l;
  std::string why;
  if (!g_layout) {
    why = "PyTorch " + std::string(source.version.empty() ? "of an unknown version" : source.version) +
          ": the layout of its trace entries is not one this tracer knows (docs/trace-format.md, BlockSource)";
    return refuse(why.c_str());
  }
  void* lib = c10_cuda_beside(report_fn);
  auto* slot = lib ? static_cast<std::atomic<void*>*>(real_dlsym()(lib, kAllocatorSymbol)) : nullptr;
  void* allocator = slot ? slot->load(std::memory_order_acquire) : nullptr;
  if (!allocator) return refuse("libc10_cuda.so's allocator object was not found beside libc10.so");
  void** vtable = *static_cast<void***>(allocator);
  const auto* type = static_cast<const std::type_info*>(vtable[-1]);
  if (!type || std::strcmp(type->name(), kNativeType) != 0) {
    why = std::string("the CUDA allocator is ") + (type ? type->name() : "of no known type") +
          ", not PyTorch's native caching allocator";
    return refuse(why.c_str());
  }
  using Tracker = std::function<void(const TorchTraceEntry&)>;
  using Attach = void (*)(void* self, Tracker tracker);
  reinterpret_cast<Attach>(vtable[g_layout->attach_slot])(allocator, Tracker(on_trace_entry));
  g_attached.store(true, std::memory_order_release);
}

bool merge_torch_trace_entry(BlockDraft& d) {
  Stash& s = t_stash;
  if (s.op == format::BlockOp{} || !g_attached.load(std::memory_order_acquire)) return false;
  const Stash got = s;
  s.op = {};
  if (block_trace_entries_off()) return false;
  if (got.op != d.op || got.address != (d.op == format::BlockOp::kOom ? 0 : d.address)) {
    char why[200];
    std::snprintf(why, sizeof why,
                  "a trace entry of a block at 0x%llx is followed by the report of a block at 0x%llx: the entries "
                  "are not laid out as the tracer reads them",
                  static_cast<unsigned long long>(got.address), static_cast<unsigned long long>(d.address));
    refuse(why);
    return false;
  }
  d.requested = got.requested, d.stream = got.stream, d.pool[0] = got.pool[0], d.pool[1] = got.pool[1];
  d.flags |= format::kBlockTraceEntry;
  if (got.op == format::BlockOp::kFree && got.pending) d.flags |= format::kBlockPendingFree;
  return true;
}

}  // namespace cumemtrace::interpose
