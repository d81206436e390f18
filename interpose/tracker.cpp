#include "tracker.h"

#include <cerrno>
#include <ctime>
#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <unordered_map>

#include <cuda.h>
#include <cumemtrace/address_map.h>
#include <cumemtrace/flat_fragmentation.h>

#include "capture.h"
#include "config.h"
#include "driver_api.h"
#include "encode.h"
#include "errno_guard.h"
#include "loader_lock.h"
#include "log.h"
#include "pending_buffer.h"
#include "python_frames.h"
#include "python_tree.h"
#include "signal_safe.h"
#include "stack_tree.h"
#include "thread_state.h"
#include "writer.h"

namespace cumemtrace::interpose {
namespace {

using format::Kind;
using format::Op;

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

struct DeviceState {
  explicit DeviceState(uint64_t granule) : frag(granule) {}
  uint64_t live_bytes[format::kKindCount] = {};
  uint64_t live_count = 0;
  uint64_t device_bytes = 0;  // sum over holds_device_memory kinds
  uint64_t peak = 0, peak_time = 0;
  uint64_t peak_since_reset = 0;  // for cumemtrace_stats (api.h): since cumemtrace_reset_peak()
  uint64_t sampled_peak = 0;  // device_bytes at the last kSampledPeak snapshot
  FlatFragmentationIndex frag;  // flat_fragmentation.h says why not FragmentationIndex

  // Returns whether the peak rose.
  bool add(Kind k, uint64_t address, uint64_t size, uint64_t t) {
    live_bytes[int(k)] += size;
    ++live_count;
    if (format::counts_for_fragmentation(k)) frag.insert(address, size);
    if (!format::holds_device_memory(k)) return false;
    device_bytes += size;
    peak_since_reset = std::max(peak_since_reset, device_bytes);
    if (device_bytes <= peak) return false;
    peak = device_bytes, peak_time = t;
    return true;
  }
  void remove(Kind k, uint64_t address, uint64_t size) {
    live_bytes[int(k)] -= size;
    --live_count;
    if (format::counts_for_fragmentation(k)) frag.erase(address);
    if (format::holds_device_memory(k)) device_bytes -= size;
  }
};

struct Allocation {
  uint64_t size;
  int32_t device;
  Kind kind;
  uint32_t stack;  // for cumemtrace_live_sites (api.h)
  uint32_t epoch;  // cumemtrace_reset_peak() calls before it was made
  uint64_t context = 0;  // the cuCtxCreate context it was made in; 0: its device's primary
};

// The kinds whose memory a context's teardown frees with it: cuMemAlloc's,
// cuMemAllocPitch's and CUDA arrays (cuda.h, cuCtxDestroy: "all resources allocated
// in the context"; the simulated driver does the same). Stream-
// ordered pools and VMM memory outlive a context; managed and pinned host memory are left
// live, since their fate at a teardown is not pinned down by a driver we can test against.
bool owned_by_context(Kind k) { return k == Kind::kDevice || k == Kind::kPitch || k == Kind::kArray; }

struct Physical {  // a cuMemCreate handle: its memory lasts until released AND unmapped
  uint64_t size;
  int32_t device;
  uint32_t maps;
  uint32_t references;  // cuMemCreate's, plus one per cuMemRetainAllocationHandle
  uint32_t stack;
  uint32_t epoch;
  // cuMemImportFromShareableHandle: another process's memory (kind kIpcImport), never this
  // one's device bytes. Its size is learnt at its first cuMemMap (the driver has no query).
  bool imported = false;
  Kind kind() const { return imported ? Kind::kIpcImport : Kind::kVmmPhysical; }
  bool released() const { return references == 0; }
};
struct Mapping {
  uint64_t size;
  uint64_t handle;
  int32_t device;
  bool imported;  // of an imported handle: never counted, so never taken off
};

// 1.6: an event with Python frames carries its Python stack after the EventRecord.
#pragma pack(push, 1)
struct EventWithPython {
  format::EventRecord ev;
  format::EventPython python;
};
#pragma pack(pop)

struct State {
  std::mutex mu;
  PendingBuffer pending;  // encoded records not yet taken by the writer
  std::string new_nodes;  // StackNodeRecords of the event being recorded
  uint64_t events_written = 0, events_dropped = 0;
  StackTree stacks;
  PyStackTree python_stacks;
  AddressMap<Allocation> allocations;                    // by address (address_map.h: no node per allocation)
  std::unordered_map<uint64_t, Physical> physical;       // by handle
  std::map<uint64_t, Mapping> mappings;                  // by address, ordered for ranged unmaps
  std::unordered_map<uint64_t, uint64_t> reservations;   // address -> size
  std::map<int32_t, DeviceState> devices;
  std::map<int32_t, std::string> device_uuids;   // as NVML spells them
  std::map<int32_t, uint64_t> default_pools;      // device -> its default memory pool
  uint64_t peak_rises = 0;                        // times some device's peak rose
  uint64_t peak_rises_at_snapshot = 0;            // ... as of the last snapshot
  std::unordered_map<uint64_t, int32_t> pool_devices;    // memory pool -> device ordinal
  struct GraphNode {
    uint64_t size;
    int32_t device;
  };
  std::unordered_map<uint64_t, GraphNode> graph_allocations;  // kEventCaptured allocs, by address
  uint32_t epoch = 0;  // cumemtrace_reset_peak() calls
  std::unordered_map<uint64_t, int32_t> created_contexts;  // cuCtxCreate's live contexts -> device

  // Calls f(device, stack, size) for each live allocation holding device memory made since
  // the last reset_peak() (cumemtrace_stats and cumemtrace_live_sites count the same set).
  template <class F>
  void each_since_reset(F f) const {
    allocations.for_each([&](uint64_t, const Allocation& a) {
      if (a.epoch == epoch && format::holds_device_memory(a.kind)) f(a.device, a.stack, a.size);
    });
    for (const auto& [handle, p] : physical)
      if (p.epoch == epoch && !p.imported) f(p.device, p.stack, p.size);
  }

  DeviceState& device(int32_t d) { return devices.try_emplace(d, config().granule_bytes).first->second; }

  void drop_physical(uint64_t handle) {
    auto it = physical.find(handle);
    if (it == physical.end()) return;
    device(it->second.device).remove(it->second.kind(), 0, it->second.size);
    physical.erase(it);
  }

  // Updates the live picture and completes `ev` (device, kind, size of frees).
  void apply(format::EventRecord& ev) {
    const auto op = Op(ev.op);
    if (op == Op::kPoolTrim) {
      const auto pool = pool_devices.find(ev.handle);
      ev.device = pool != pool_devices.end() ? pool->second : -1;
    }
    if (op == Op::kShare && !complete_share(ev)) return;
    device(ev.device);  // even a failed call puts its device in the snapshots
    // A failed call changed nothing (failed allocs are OOMs), except a restore.
    if (ev.result != 0 && !(ev.flags & format::kEventRestored)) return;
    if (ev.result != 0 && op == Op::kFree) return;  // a failed free of an unknown address
    if (apply_graph(ev)) return;
    switch (op) {
      case Op::kAlloc:
        if (Kind(ev.kind) == Kind::kVmmPhysical) {
          physical[ev.handle] = {ev.size, ev.device, 0, 1, ev.stack_id, epoch};
          peak_rises += device(ev.device).add(Kind::kVmmPhysical, 0, ev.size, ev.time_ns);
        } else if (Kind(ev.kind) == Kind::kIpcImport && ev.address == 0) {
          physical[ev.handle] = {0, ev.device, 0, 1, ev.stack_id, epoch, true};
        } else {
          // A reused address means we missed its free (e.g. made before we loaded).
          if (const Allocation* old = allocations.find(ev.address))
            device(old->device).remove(old->kind, ev.address, old->size);
          allocations.insert_or_assign(ev.address, {ev.size, ev.device, Kind(ev.kind), ev.stack_id, epoch});
          if (ev.handle && Kind(ev.kind) == Kind::kAsyncPool) pool_devices[ev.handle] = ev.device;
          peak_rises += device(ev.device).add(Kind(ev.kind), ev.address, ev.size, ev.time_ns);
        }
        break;
      case Op::kFree:
        if (Kind(ev.kind) == Kind::kVmmPhysical) {
          auto it = physical.find(ev.handle);
          if (it == physical.end()) return unknown(ev);
          ev.device = it->second.device;
          ev.size = it->second.size;
          ev.kind = uint8_t(it->second.kind());
          if (it->second.released()) return unknown(ev);  // more releases than references
          if (--it->second.references == 0 && it->second.maps == 0) drop_physical(ev.handle);
        } else {
          const Allocation* a = allocations.find(ev.address);
          if (!a) return unknown(ev);
          ev.device = a->device;
          ev.kind = uint8_t(a->kind);
          ev.size = a->size;
          device(ev.device).remove(a->kind, ev.address, ev.size);
          allocations.erase(ev.address);
        }
        break;
      case Op::kMap: {
        auto p = physical.find(ev.handle);
        ev.device = p != physical.end() ? p->second.device : -1;
        if (p != physical.end()) ++p->second.maps;
        const bool imported = p != physical.end() && p->second.imported;
        mappings[ev.address] = {ev.size, ev.handle, ev.device, imported};
        if (imported) {
          // Another process's memory seen through this range: neither mapped bytes nor
          // footprint here (the NVML split would count it twice, H200 run L).
          if (p->second.size == 0) {
            p->second.size = ev.size;
            device(ev.device).add(Kind::kIpcImport, 0, ev.size, ev.time_ns);
          }
          break;
        }
        device(ev.device).add(Kind::kVmmMap, ev.address, ev.size, ev.time_ns);
        break;
      }
      case Op::kUnmap: {
        // One unmap may cover several mappings made by separate cuMemMap calls.
        auto it = mappings.lower_bound(ev.address);
        if (it == mappings.end() || it->first >= ev.address + ev.size) return unknown(ev);
        ev.device = it->second.device;
        while (it != mappings.end() && it->first < ev.address + ev.size) {
          auto p = physical.find(it->second.handle);
          if (!it->second.imported) device(it->second.device).remove(Kind::kVmmMap, it->first, it->second.size);
          if (p != physical.end() && --p->second.maps == 0 && p->second.released()) drop_physical(p->first);
          it = mappings.erase(it);
        }
        break;
      }
      case Op::kReserve:
        reservations[ev.address] = ev.size;
        device(-1).add(Kind::kVmmReserve, ev.address, ev.size, ev.time_ns);
        break;
      case Op::kReserveFree: {
        auto it = reservations.find(ev.address);
        if (it == reservations.end()) return unknown(ev);
        device(-1).remove(Kind::kVmmReserve, ev.address, it->second);
        reservations.erase(it);
        break;
      }
      case Op::kRetain: {
        auto p = physical.find(ev.handle);
        if (p == physical.end()) return unknown(ev);
        ev.device = p->second.device;
        ev.size = p->second.size;
        ev.kind = uint8_t(p->second.kind());
        ++p->second.references;
        break;
      }
      case Op::kShare:  // completed by complete_share, before any device is touched
      case Op::kPoolTrim:
      case Op::kContextCreate:
      case Op::kGraphLaunch:  // the graph pool's memory is read from the driver, not tracked
      case Op::kGraphExecDestroy:
      case Op::kGraphMemTrim:
        break;
    }
  }

  // A share is a mark on what it names (an allocation by address, a physical handle):
  // its device, kind and size are completed; no bytes move. False when it names nothing live.
  bool complete_share(format::EventRecord& ev) {
    if (auto p = ev.address ? physical.end() : physical.find(ev.handle); p != physical.end()) {
      ev.device = p->second.device;
      ev.size = p->second.size;
      ev.kind = uint8_t(p->second.kind());
      return true;
    }
    if (const Allocation* a = ev.address ? allocations.find(ev.address) : nullptr) {
      ev.device = a->device;
      ev.kind = uint8_t(a->kind);
      ev.size = a->size;
      return true;
    }
    unknown(ev);
    return false;
  }

  // Graph memory nodes (kEventCaptured): their addresses are remembered so that their
  // frees, captured or not, are known, but they hold no device memory when made. A
  // captured free of an ordinary allocation happens when the graph runs: not applied.
  bool apply_graph(format::EventRecord& ev) {
    const auto op = Op(ev.op);
    if (op == Op::kAlloc && (ev.flags & format::kEventCaptured)) {
      graph_allocations[ev.address] = {ev.size, ev.device};
      return true;
    }
    if (op == Op::kAlloc && !graph_allocations.empty()) graph_allocations.erase(ev.address);  // ordinary memory now
    if (op != Op::kFree) return false;
    // A graph node's address stays the graph's: each launch makes it live again, and the
    // program frees it after each launch (an allocation that escaped the graph).
    if (auto g = graph_allocations.find(ev.address); g != graph_allocations.end()) {
      ev.kind = uint8_t(Kind::kAsyncPool);
      ev.size = g->second.size;
      ev.device = g->second.device;
      return true;
    }
    if (!(ev.flags & format::kEventCaptured)) return false;
    if (const Allocation* a = allocations.find(ev.address)) {
      ev.device = a->device;
      ev.kind = uint8_t(a->kind);
      ev.size = a->size;
    }
    return true;
  }

  static void unknown(format::EventRecord& ev) {
    ev.flags |= format::kEventUnknownAddress;
    ev.kind = uint8_t(Kind::kUnknown);
  }

  uint64_t seq() const { return events_written + events_dropped; }

  // Whether the allocation just applied lifts its device past the last sampled peak by
  // the margin (trace_format.h: sampled_peak_margin); if so, that is the new sampled peak.
  bool crosses_sampled_peak(const format::EventRecord& ev) {
    if (Op(ev.op) != Op::kAlloc || ev.result != 0 || !format::holds_device_memory(Kind(ev.kind))) return false;
    DeviceState& ds = device(ev.device);
    if (ds.device_bytes < ds.sampled_peak + format::sampled_peak_margin(ds.sampled_peak)) return false;
    ds.sampled_peak = ds.device_bytes;
    return true;
  }

  // False (nothing appended) when `same_moment_only` and events came after the samples'
  // readings began.
  bool append_snapshot(format::SnapshotReason reason, const DeviceSamples& samples, bool same_moment_only) {
    const bool same = seq() == samples.seq_before;
    if (same_moment_only && !same) return false;
    peak_rises_at_snapshot = peak_rises;
    const uint32_t flags = samples.capture_open ? uint32_t(format::kSnapshotCaptureOpen) : 0u;
    const format::SnapshotRecord head{now_ns(), uint32_t(reason), uint32_t(devices.size()),
                                      uint32_t(sizeof(format::DeviceSnapshot)), flags, events_dropped};
    const format::RecordHeader h{uint16_t(format::RecordType::kSnapshot), 0,
                                 uint32_t(sizeof head + devices.size() * sizeof(format::DeviceSnapshot))};
    put_bytes(pending, &h, sizeof h);
    put_bytes(pending, &head, sizeof head);
    for (const auto& [dev, ds] : devices) {
      format::DeviceSnapshot e{};
      e.device = dev;
      std::copy(ds.live_bytes, ds.live_bytes + format::kSnapshotKinds, e.live_bytes);
      std::copy(ds.live_bytes + format::kSnapshotKinds, std::end(ds.live_bytes), e.live_bytes_more);
      e.live_count = ds.live_count;
      e.device_bytes = ds.device_bytes;
      e.peak_device_bytes = ds.peak;
      e.peak_time_ns = ds.peak_time;
      const FragmentationFigures f = ds.frag.figures();
      e.arena_bytes = f.arena_bytes;
      e.arena_count = f.arena_count;
      e.gap_bytes = f.gap_bytes;
      e.largest_gap = f.largest_gap;
      const auto n = samples.devices.find(dev);
      const DeviceSample sample = n != samples.devices.end() ? n->second : DeviceSample{};
      e.nvml_process_used = sample.nvml.process_used;
      e.nvml_device_free = sample.nvml.device_free;
      e.nvml_device_total = sample.nvml.device_total;
      e.pool_reserved_bytes = sample.pool_reserved;
      e.graph_used_current = sample.graph.used_current;
      e.graph_reserved_current = sample.graph.reserved_current;
      e.graph_used_high = sample.graph.used_high;
      e.graph_reserved_high = sample.graph.reserved_high;
      e.nvml_read_ns = sample.nvml.read_ns;
      e.event_seq = seq();
      e.moment = same && sample.nvml.process_used != format::kUnknown64 ? uint32_t(format::kMomentSame) : 0u;
      put_bytes(pending, &e, sizeof e);
    }
    for (const auto& [dev, sample] : samples.devices) {
      if (!sample.nvml.processes_known || !devices.count(dev)) continue;
      const auto& procs = sample.nvml.processes;
      const format::GpuProcessesRecord g{sample.nvml.read_ns, dev, uint32_t(procs.size())};
      const format::RecordHeader gh{uint16_t(format::RecordType::kGpuProcesses), 0,
                                    uint32_t(sizeof g + procs.size() * sizeof(format::GpuProcess))};
      put_bytes(pending, &gh, sizeof gh);
      put_bytes(pending, &g, sizeof g);
      if (!procs.empty()) put_bytes(pending, procs.data(), procs.size() * sizeof(format::GpuProcess));
    }
    return true;
  }
};

// Contexts from cuCtxCreate ever made: until one is, every allocation is its device's
// primary context's, and no allocation pays a driver call to ask which context is current.
std::atomic<bool> g_created_any{false};

std::atomic<State*> g_state{nullptr};
std::atomic<uint64_t> g_failed{0};
std::atomic<uint32_t> g_last_device_plus_one{0};  // any thread's last known device, + 1
std::atomic<bool> g_stopped{false};
std::mutex g_create_mu;  // trivially destructible in libstdc++: safe at exit

State& state() {
  if (State* s = g_state.load(std::memory_order_acquire)) return *s;
  std::lock_guard lock(g_create_mu);
  if (!g_state.load(std::memory_order_relaxed)) {
    g_state.store(new State, std::memory_order_release);  // lives until exit (or fork)
    start_writer();
  }
  return *g_state.load(std::memory_order_relaxed);
}

// Devices described in the trace so far; checked before locking so that the driver is
// only queried (outside the lock) the first time an ordinal shows up.
std::atomic<uint64_t> g_described{0};
bool described(int32_t d) { return d < 0 || d >= 64 || (g_described.load(std::memory_order_relaxed) >> d & 1); }

}  // namespace

bool tracing_enabled() { return !config().disabled && !g_stopped.load(std::memory_order_relaxed); }

void stop_tracing() { g_stopped.store(true, std::memory_order_relaxed); }

format::EventRecord track(const EventDraft& d, uint16_t api, uint32_t flags) {
  const ErrnoGuard keep_errno;
  RawStack stack;
  PyRawStack python;
  // A free that failed (kEventRestored) keeps its stack: it is worth a look.
  const bool frees = (d.op == Op::kFree || d.op == Op::kUnmap || d.op == Op::kReserveFree) &&
                     !(flags & format::kEventRestored);
  if (!frees || config().free_stacks) {
    capture_python(python);
    capture_stack(stack, python.count ? config().python_native_depth : config().stack_depth);
  } else {
    stack.count = 0;
  }

  format::EventRecord ev{};
  ev.address = d.address;
  ev.size = d.size;
  ev.stream = d.stream;
  ev.handle = d.handle;
  ev.tid = thread_state().tid;
  ev.device = d.device;
  ev.result = d.result;
  ev.api = api;
  ev.op = uint8_t(d.op);
  ev.kind = uint8_t(d.kind);
  ev.flags = flags;
  ThreadState& t = thread_state();
  if (ev.device == kDeviceFromCall)
    // An array's address is a handle, which the driver cannot place: its context's device.
    ev.device = d.op == Op::kAlloc || d.op == Op::kContextCreate
                    ? device_of(d.kind == Kind::kArray ? 0 : d.address)
                    : -1;
  if (ev.device == kDeviceNotAsked) {
    // A stream capture is open: no driver call. The thread's last known device stands in,
    // else the process's (a thread whose first CUDA call is a capture: its context was
    // made by another thread, H200 run K). Flagged inferred: it is a guess.
    const uint32_t known = t.asked_device_plus_one ? t.asked_device_plus_one
                                                   : g_last_device_plus_one.load(std::memory_order_relaxed);
    ev.device = known ? int32_t(known) - 1 : -1;
    ev.flags |= format::kEventDeviceInferred;
  } else if (ev.device >= 0 && (d.device == kDeviceFromCall || d.op == Op::kContextCreate)) {
    // The device of the thread's context, as the driver answered it or as a context was
    // made on it; not a device a call merely names (cuMemCreate on another device).
    t.asked_device_plus_one = uint32_t(ev.device) + 1;
    g_last_device_plus_one.store(t.asked_device_plus_one, std::memory_order_relaxed);
  }

  uint64_t context = 0;
  if (d.op == Op::kAlloc && owned_by_context(d.kind) && (d.result == 0 || (flags & format::kEventRestored)) &&
      g_created_any.load(std::memory_order_relaxed))
    context = current_context();

  DeviceFacts facts;
  bool describe = !described(ev.device);
  if (describe) {
    facts = device_facts(ev.device);
    describe = facts.asked;  // during a capture: described by a later event
  }

  State& s = state();
  bool sample_peak = false;
  {
    std::lock_guard lock(s.mu);
    // Stamped under the lock, so that the file is in time order: stamped before it, 8
    // threads put an earlier time after a later one hundreds of times a run, and a
    // moment's state (`live --at`) then differed from the same moment in file order.
    ev.time_ns = now_ns();
    if (describe && !described(ev.device)) {
      g_described.fetch_or(1ull << ev.device, std::memory_order_relaxed);
      format::DeviceRecord rec{};
      rec.ordinal = ev.device;
      rec.nvml_index = -1;
      rec.total_bytes = facts.total_bytes;
      std::copy(std::begin(facts.uuid), std::end(facts.uuid), rec.uuid);
      put_record(s.pending, format::RecordType::kDevice, rec, facts.name);
      if (facts.uuid_known) s.device_uuids[ev.device] = nvml_uuid_string(facts.uuid);
      for (uint64_t pool : facts.pools)
        if (pool) s.pool_devices[pool] = ev.device;
      if (facts.pools[0]) s.default_pools[ev.device] = facts.pools[0];
    }
    ev.stack_id = s.stacks.intern(stack, s.new_nodes);
    const uint32_t python_stack_id = s.python_stacks.intern(python, s.new_nodes);
    if (!s.new_nodes.empty()) {
      s.pending.append(s.new_nodes);
      s.new_nodes.clear();
    }
    s.apply(ev);
    if (context && s.created_contexts.count(context))
      if (Allocation* a = s.allocations.find(ev.address)) a->context = context;
    sample_peak = s.crosses_sampled_peak(ev);
    if (s.pending.size() < config().buffer_limit_bytes) {
      if (python_stack_id)
        put_record(s.pending, format::RecordType::kEvent, EventWithPython{ev, {python_stack_id}});
      else
        put_record(s.pending, format::RecordType::kEvent, ev);
      ++s.events_written;
    } else {
      ++s.events_dropped;  // the disk is behind: keep the job going, say so in the trace
    }
  }
  if (d.op == Op::kAlloc && d.result != 0 && !(flags & format::kEventRestored)) {
    // The moment of a failure: freeze the picture (with what NVML says) right after it.
    take_snapshot(format::SnapshotReason::kFailedAllocation);
    // Only an out-of-memory earns a post-mortem: a refused probe (PyTorch's expandable
    // segments try a fabric handle first: CUDA_ERROR_NOT_PERMITTED, H200 run L) is the
    // program's business. CUDA_ERROR_OUT_OF_MEMORY and cudaErrorMemoryAllocation are both 2.
    if (d.result == CUDA_ERROR_OUT_OF_MEMORY) g_failed.fetch_add(1, std::memory_order_relaxed);
    wake_writer();
  } else if (sample_peak) {
    // NVML's figure while the peak holds: the next free may come a millisecond later,
    // too soon for the writer thread (issue: a 15 GiB peak freed at once by empty_cache).
    take_snapshot(format::SnapshotReason::kSampledPeak);
  }
  return ev;
}

void track_teardown(uint16_t api, int32_t device, uint64_t context, uint32_t flags) {
  const ErrnoGuard keep_errno;
  RawStack stack;
  capture_stack(stack, config().stack_depth);
  State& s = state();
  std::lock_guard lock(s.mu);
  if (context) {
    const auto c = s.created_contexts.find(context);
    if (c == s.created_contexts.end()) return;  // not one of cuCtxCreate's: nothing of ours
    device = c->second;
    s.created_contexts.erase(c);
  }
  // In address order, so that a trace of the same run always reads the same. The list is
  // as long as what the context held; a teardown is rare (once per device and process).
  std::vector<uint64_t> doomed;
  s.allocations.for_each([&](uint64_t address, const Allocation& a) {
    if (a.context == context && a.device == device && owned_by_context(a.kind)) doomed.push_back(address);
  });
  std::sort(doomed.begin(), doomed.end());
  const uint32_t stack_id = s.stacks.intern(stack, s.new_nodes);
  if (!s.new_nodes.empty()) {
    s.pending.append(s.new_nodes);
    s.new_nodes.clear();
  }
  const uint64_t t = now_ns();
  for (const uint64_t address : doomed) {
    format::EventRecord ev{};
    ev.time_ns = t;
    ev.address = address;
    ev.tid = thread_state().tid;
    ev.device = device;
    ev.stack_id = stack_id;
    ev.api = api;
    ev.op = uint8_t(Op::kFree);
    ev.flags = format::kEventTeardown | flags;
    s.apply(ev);  // completes kind and size
    if (s.pending.size() < config().buffer_limit_bytes) {
      put_record(s.pending, format::RecordType::kEvent, ev);
      ++s.events_written;
    } else {
      ++s.events_dropped;
    }
  }
}

void note_created_context(uint64_t context, int32_t device) {
  if (!context) return;
  State& s = state();
  std::lock_guard lock(s.mu);
  s.created_contexts[context] = device;
  g_created_any.store(true, std::memory_order_relaxed);
}

void take_pending(std::vector<std::string>& chunks) {
  State& s = state();
  std::lock_guard lock(s.mu);
  s.pending.take(chunks);
}

void give_back_pending(std::vector<std::string>& chunks) {
  State& s = state();
  std::lock_guard lock(s.mu);
  s.pending.give_back(chunks);
}

bool visit_pending_in_signal_handler(void (*write)(std::string_view, int), int fd) {
  State* s = g_state.load(std::memory_order_acquire);
  if (!s || !try_lock_for_a_second(s->mu)) return false;
  s->pending.for_each_chunk([&](std::string_view c) { write(c, fd); });
  s->mu.unlock();
  return true;
}

namespace {

// What the snapshots' readings cost, for the exit log (CUMEMTRACE_LOG=info): one look
// tells whether they could weigh on a job (docs/validation.md section 16: they did not).
struct SamplingCost {
  std::atomic<uint64_t> snapshots{0}, samplings{0}, nvml_ns{0}, nvml_max_ns{0}, driver_ns{0}, driver_max_ns{0};
  static void raise(std::atomic<uint64_t>& max, uint64_t v) {
    for (uint64_t m = max.load(std::memory_order_relaxed); v > m && !max.compare_exchange_weak(m, v);) {
    }
  }
  void reset() {
    for (auto* a : {&snapshots, &samplings, &nvml_ns, &nvml_max_ns, &driver_ns, &driver_max_ns})
      a->store(0, std::memory_order_relaxed);
  }
  void add(uint64_t nvml, uint64_t driver) {
    samplings.fetch_add(1, std::memory_order_relaxed);
    nvml_ns.fetch_add(nvml, std::memory_order_relaxed);
    driver_ns.fetch_add(driver, std::memory_order_relaxed);
    raise(nvml_max_ns, nvml);
    raise(driver_max_ns, driver);
  }
} g_sampling_cost;

// NVML and the driver, outside the tracker's lock (the driver only outside captures).
DeviceSamples sample_devices() {
  State& s = state();
  std::map<int32_t, std::string> uuids;
  std::map<int32_t, uint64_t> pools;
  std::vector<int32_t> ordinals;
  DeviceSamples out;
  {
    std::lock_guard lock(s.mu);
    uuids = s.device_uuids;
    pools = s.default_pools;
    for (const auto& [dev, ds] : s.devices)
      if (dev >= 0) ordinals.push_back(dev);
    out.seq_before = s.seq();
  }
  const ForeignCall foreign;  // NVML and the driver may use the loader inside (loader_lock.h)
  const uint64_t t0 = now_ns();
  // NVML is not CUDA: a capture does not see it (checked on the H200, docs/validation.md).
  for (const auto& [dev, uuid] : uuids) out.devices[dev].nvml = nvml_query(uuid);
  const uint64_t t1 = now_ns();
  const OwnCudaCalls own;
  out.capture_open = !own;
  if (own) {
    for (const auto& [dev, pool] : pools) out.devices[dev].pool_reserved = pool_reserved_bytes(pool);
    for (int32_t dev : ordinals) out.devices[dev].graph = graph_mem_figures(dev);
  }
  g_sampling_cost.add(t1 - t0, now_ns() - t1);
  return out;
}

}  // namespace

void take_snapshot(format::SnapshotReason reason) {
  State& s = state();
  g_sampling_cost.snapshots.fetch_add(1, std::memory_order_relaxed);
  for (int attempt = 1;; ++attempt) {
    const DeviceSamples samples = sample_devices();
    std::lock_guard lock(s.mu);
    if (s.append_snapshot(reason, samples, attempt < 3)) return;
  }
}

void log_sampling_cost() {
  const SamplingCost& c = g_sampling_cost;
  log_info("snapshots: {} ({} samplings); NVML {:.3f} ms in all, {:.3f} ms at most; driver {:.3f} ms in all, {:.3f} ms at most",
           c.snapshots.load(), c.samplings.load(), c.nvml_ns.load() / 1e6, c.nvml_max_ns.load() / 1e6,
           c.driver_ns.load() / 1e6, c.driver_max_ns.load() / 1e6);
}

bool track_mark(std::string_view name, format::MarkSource source) {
  const bool end = source == format::MarkSource::kNvtxPop || source == format::MarkSource::kNvtxEnd;
  if (!tracing_enabled() || !g_state.load(std::memory_order_acquire)) return false;
  const ErrnoGuard keep_errno;
  format::MarkRecord m{};
  m.tid = thread_state().tid;
  m.source = uint8_t(source);
  State& s = state();
  std::lock_guard lock(s.mu);
  m.time_ns = now_ns();  // under the lock, as an event's: the file stays in time order
  if (s.pending.size() >= config().buffer_limit_bytes) return false;
  put_record(s.pending, end ? format::RecordType::kRangeEnd : format::RecordType::kMark, m,
             std::string(name.substr(0, 4096)));
  return true;
}

bool device_stats(std::vector<DeviceStats>& out) {
  State* s = g_state.load(std::memory_order_acquire);
  if (!s) return false;
  std::lock_guard lock(s->mu);
  for (const auto& [d, ds] : s->devices) out.push_back({d, ds.device_bytes, ds.peak, ds.peak_since_reset, 0, 0});
  s->each_since_reset([&](int32_t device, uint32_t, uint64_t size) {
    for (auto& o : out)
      if (o.device == device) o.live_since_reset_bytes += size, ++o.live_since_reset_count;
  });
  return true;
}

bool live_sites(std::vector<LiveSite>& out) {
  State* s = g_state.load(std::memory_order_acquire);
  if (!s) return false;
  std::lock_guard lock(s->mu);
  std::map<std::pair<int32_t, uint32_t>, LiveSite> by_site;
  s->each_since_reset([&](int32_t device, uint32_t stack, uint64_t size) {
    LiveSite& l = by_site[{device, stack}];
    l.device = device, l.stack = stack, l.bytes += size, ++l.count;
  });
  for (auto& [key, l] : by_site) out.push_back(l);
  std::stable_sort(out.begin(), out.end(), [](const LiveSite& a, const LiveSite& b) { return a.bytes > b.bytes; });
  return true;
}

uint32_t stack_frames(uint32_t id, uint64_t* out, uint32_t max) {
  State* s = g_state.load(std::memory_order_acquire);
  if (!s) return 0;
  std::lock_guard lock(s->mu);
  return s->stacks.frames(id, out, max);
}

bool reset_peak() {
  State* s = g_state.load(std::memory_order_acquire);
  if (!s) return false;
  std::lock_guard lock(s->mu);
  ++s->epoch;
  for (auto& [d, ds] : s->devices) ds.peak_since_reset = ds.device_bytes;
  return true;
}

uint64_t failed_allocations() { return g_failed.load(std::memory_order_relaxed); }

bool peak_rose_since_snapshot() {
  State& s = state();
  std::lock_guard lock(s.mu);
  return s.peak_rises != s.peak_rises_at_snapshot;
}

void append_end() {
  State& s = state();
  std::lock_guard lock(s.mu);
  put_record(s.pending, format::RecordType::kEnd, format::EndRecord{now_ns(), s.events_written, s.events_dropped});
}

bool append_program_records(std::string_view encoded) {
  State* s = g_state.load(std::memory_order_acquire);  // never starts a trace of its own
  if (!s || !tracing_enabled()) return false;
  std::lock_guard lock(s->mu);
  if (s->pending.size() + encoded.size() > config().buffer_limit_bytes) return false;
  s->pending.append(encoded);
  return true;
}

// g_create_mu too: a thread starting the trace (state()) while another forks left the
// child waiting on it forever (attack run, 2026-12-02: 2 hangs in ~20 forks of a threaded
// Python program). Always g_create_mu before s->mu, as state() then track() take them.
void tracker_prepare_fork() {
  g_create_mu.lock();
  if (State* s = g_state.load(std::memory_order_acquire)) s->mu.lock();
}

void tracker_after_fork_parent() {
  if (State* s = g_state.load(std::memory_order_acquire)) s->mu.unlock();
  g_create_mu.unlock();
}

void tracker_after_fork_child() {
  // The child's CUDA state is not the parent's (CUDA does not survive fork): start
  // afresh, with a trace file of its own only if it touches CUDA. The parent's state
  // is left behind, unfreed, in copy-on-write pages the child never touches.
  if (State* s = g_state.load(std::memory_order_acquire)) s->mu.unlock();
  g_create_mu.unlock();
  g_state.store(nullptr, std::memory_order_release);
  g_described.store(0, std::memory_order_relaxed);
  g_failed.store(0, std::memory_order_relaxed);
  g_sampling_cost.reset();
}

}  // namespace cumemtrace::interpose
