// The live picture and the trace's records of it: track() for every hooked call, the
// snapshots, and the C API's queries (stats, live sites, marks, pools' NVTX records). Over 600 lines because
// they share one State, private to this file, so that nothing reads or changes it without
// its lock; the accounting rules themselves are in rules/ledger.h (tracker_ledger.h).
#include "track/tracker.h"

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>

#include <cuda.h>

#include "probe/stream_capture.h"
#include "base/config.h"
#include "probe/driver_api.h"
#include "base/encode.h"
#include "base/errno_guard.h"
#include "base/loader_lock.h"
#include "base/log.h"
#include "track/pending_buffer.h"
#include "stacks/python_frames.h"
#include "stacks/python_tree.h"
#include "probe/sampler.h"
#include "base/signal_safe.h"
#include "stacks/stack_tree.h"
#include "base/thread_state.h"
#include "track/tracker_ledger.h"
#include "track/writer_thread.h"

namespace cumemtrace::interpose {
namespace {

using format::Kind;
using format::Op;

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

// 1.6: an event with Python frames carries its Python stack after the EventRecord.
#pragma pack(push, 1)
struct EventWithPython {
  format::EventRecord ev;
  format::EventPython python;
};
#pragma pack(pop)

struct State : TrackerLedger {
  State() : TrackerLedger(config().granule_bytes) {}
  std::mutex mu;
  PendingBuffer pending;  // encoded records not yet taken by the writer
  std::string new_nodes;  // StackNodeRecords of the event being recorded
  uint64_t events_written = 0, events_dropped = 0;
  bool blocks_on = false;  // a BlockSource `on` record was written
  // Marks and NvtxMem records lost the same way: not events (seq() leaves them out, so that
  // snapshots still line up with the events), but the trace's "dropped" figures include them
  // (dropped()), so that a report says its figures lack something.
  uint64_t records_dropped = 0;
  uint64_t dropped() const { return events_dropped + records_dropped; }
  // The EndRecord is in `pending`: nothing more is appended nor counted, so that its count
  // is what the file holds whatever threads do during exit (issue 29.5: threads allocating
  // while the process exited put 1-15 events after it, and the report called the trace
  // incomplete).
  bool ended = false;
  StackTree stacks;
  PyStackTree python_stacks;
  // Each thread's previous stacks (stack_memo.h), by thread id modulo their number: two
  // threads on one memo cost lookups, never a wrong stack. In the State, not per thread,
  // so that they go with the trees they name nodes of (a fork child makes new ones) and
  // are only touched under `mu`.
  struct Memos {
    StackTree::Memo native;
    PyStackTree::Memo python;
  };
  static constexpr uint32_t kMemos = 64;
  std::vector<Memos> memos = std::vector<Memos>(kMemos);
  uint64_t stack_checks_failed = 0;
  std::map<int32_t, std::string> device_uuids;             // as NVML spells them
  std::map<int32_t, uint64_t> default_pools;               // device -> its default memory pool
  uint64_t peak_rises_at_snapshot = 0;                     // peak_rises as of the last snapshot
  std::unordered_map<uint64_t, int32_t> created_contexts;  // cuCtxCreate's live contexts -> device

  uint64_t seq() const { return events_written + events_dropped; }

  // False (nothing appended) when `same_moment_only` and events came after the samples'
  // readings began.
  bool append_snapshot(format::SnapshotReason reason, const DeviceSamples& samples, bool same_moment_only) {
    if (ended) return true;  // a late reading after the EndRecord: not written
    const bool same = seq() == samples.seq_before;
    if (same_moment_only && !same) return false;
    peak_rises_at_snapshot = peak_rises;
    const uint32_t flags = samples.capture_open ? uint32_t(format::kSnapshotCaptureOpen) : 0u;
    const format::SnapshotRecord head{
        now_ns(), uint32_t(reason), uint32_t(devices.size()), uint32_t(sizeof(format::DeviceSnapshot)),
        flags,    dropped()};
    const format::RecordHeader h{uint16_t(format::RecordType::kSnapshot), 0,
                                 uint32_t(sizeof head + devices.size() * sizeof(format::DeviceSnapshot))};
    put_bytes(pending, &h, sizeof h);
    put_bytes(pending, &head, sizeof head);
    for (const auto& [dev, ds] : devices) {
      format::DeviceSnapshot e{};
      e.device = dev;
      std::copy(ds.live_bytes, ds.live_bytes + format::kSnapshotKinds, e.live_bytes);
      std::copy(ds.live_bytes + format::kSnapshotKinds, std::end(ds.live_bytes), e.live_bytes_more);
      e.live_bytes[int(Kind::kVmmReserve)] = ds.reserved_bytes;  // the ledger keeps them apart
      e.live_count = ds.snapshot_live_count();
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
      if (samples.nvml_missed && device_uuids.count(dev)) e.moment |= format::kMomentReadingMissed;
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

// CUMEMTRACE_CHECK_STACKS: the ids the memos gave against a full intern's (tests; the
// records a difference adds are the stacks a full intern would have named).
void check_stacks(State& s, const RawStack& stack, const PyRawStack& python, uint32_t native_id, uint32_t python_id) {
  const uint32_t full_native = s.stacks.intern(stack, s.new_nodes);
  const uint32_t full_python = s.python_stacks.intern(python, s.new_nodes);
  if (full_native == native_id && full_python == python_id) return;
  if (++s.stack_checks_failed <= 20)
    log_warn("stack check: event {} got native stack {} and Python stack {}, a full intern {} and {}", s.seq(),
             native_id, python_id, full_native, full_python);
}

// CUMEMTRACE_CHECK_STACKS: the stack walk_stack gave against one walked the full
// length (called from the same frame, so our own frames are the same too).
void check_native_walk(const RawStack& stack, uint32_t depth) {
  RawStack again;
  walk_stack(again, depth, true);
  if (again.count == stack.count && std::equal(stack.ip, stack.ip + stack.count, again.ip)) return;
  static std::atomic<int> said{0};
  if (said.fetch_add(1, std::memory_order_relaxed) < 20)
    log_warn("stack check: a native walk gave {} frames, the full length {}", stack.count, again.count);
}

// The calling thread's Python stack and native stack, the native one as deep as the
// settings allow with Python frames or without. Outside the tracker's lock.
void walk_stacks(RawStack& stack, PyRawStack& python) {
  walk_python(python);
  const uint32_t depth = python.count ? config().python_native_depth : config().stack_depth;
  walk_stack(stack, depth);
  if (config().check_stacks) check_native_walk(stack, depth);
}

// Both stacks' tree ids (0: none), interned from thread `tid`'s previous stacks, their new
// nodes appended to the records waiting. Under the tracker's lock.
std::pair<uint32_t, uint32_t> intern_stacks(State& s, uint32_t tid, const RawStack& stack, const PyRawStack& python) {
  State::Memos& memo = s.memos[tid % State::kMemos];
  const uint32_t native = stack.count ? s.stacks.intern(stack, s.new_nodes, memo.native) : 0;
  const uint32_t py = python.count ? s.python_stacks.intern(python, s.new_nodes, memo.python) : 0;
  if (config().check_stacks) check_stacks(s, stack, python, native, py);
  if (!s.new_nodes.empty()) {
    s.pending.append(s.new_nodes);
    s.new_nodes.clear();
  }
  return {native, py};
}

// Contexts from cuCtxCreate ever made: until one is, every allocation is its device's
// primary context's, and no allocation pays a driver call to ask which context is current.
std::atomic<bool> g_created_any{false};

std::atomic<State*> g_state{nullptr};
std::atomic<uint64_t> g_failed{0};
std::atomic<uint32_t> g_last_device_plus_one{0};  // any thread's last known device, + 1
std::atomic<bool> g_stopped{false};
std::atomic<bool> g_blocks_off{false};        // a block failed the check: no more block events
std::atomic<bool> g_peak_sites_asked{false};  // reset_peak() was called, maybe before the state was made
std::mutex g_create_mu;                       // trivially destructible in libstdc++: safe at exit

State& state() {
  if (State* s = g_state.load(std::memory_order_acquire)) return *s;
  std::lock_guard lock(g_create_mu);
  if (!g_state.load(std::memory_order_relaxed)) {
    State* made = new State;  // lives until exit (or fork)
    made->keep_peak_sites = g_peak_sites_asked.load();
    g_state.store(made, std::memory_order_release);
    start_writer_thread();
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
  const bool frees =
      (d.op == Op::kFree || d.op == Op::kUnmap || d.op == Op::kReserveFree) && !(flags & format::kEventRestored);
  if (!frees || config().free_stacks) walk_stacks(stack, python);
  else stack.count = 0;

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
    ev.device =
        d.op == Op::kAlloc || d.op == Op::kContextCreate ? device_of(d.kind == Kind::kArray ? 0 : d.address) : -1;
  if (ev.device == kDeviceNotAsked) {
    // A stream capture is open: no driver call. The thread's last known device stands in,
    // else the process's (a thread whose first CUDA call is a capture: its context was
    // made by another thread, H200 run K). Flagged inferred: it is a guess.
    const uint32_t known =
        t.asked_device_plus_one ? t.asked_device_plus_one : g_last_device_plus_one.load(std::memory_order_relaxed);
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
    if (s.ended) return ev;  // past the EndRecord: neither written nor counted
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
    const auto [native_id, python_stack_id] = intern_stacks(s, t.tid, stack, python);
    ev.stack_id = native_id;
    s.apply(ev, python_stack_id);
    if (context && s.created_contexts.count(context))
      if (Allocation* a = s.allocation(ev.address)) a->context = context;
    sample_peak = s.crosses_sampled_peak(ev);
    if (s.pending.size() < config().buffer_limit_bytes) {
      if (python_stack_id) put_record(s.pending, format::RecordType::kEvent, EventWithPython{ev, {python_stack_id}});
      else put_record(s.pending, format::RecordType::kEvent, ev);
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
    wake_writer_thread();
  } else if (sample_peak) {
    // NVML's figure while the peak holds: the next free may come a millisecond later,
    // too soon for the writer thread (issue: a 15 GiB peak freed at once by empty_cache).
    // Read on the reader thread; this one waits for it at most CUMEMTRACE_NVML_WAIT_MS.
    take_snapshot(format::SnapshotReason::kSampledPeak);
  }
  return ev;
}

void track_teardown(uint16_t api, int32_t device, uint64_t context, uint32_t flags) {
  const ErrnoGuard keep_errno;
  RawStack stack;
  walk_stack(stack, config().stack_depth);
  State& s = state();
  std::lock_guard lock(s.mu);
  if (s.ended) return;
  if (context) {
    const auto c = s.created_contexts.find(context);
    if (c == s.created_contexts.end()) return;  // not one of cuCtxCreate's: nothing of ours
    device = c->second;
    s.created_contexts.erase(c);
  }
  const std::vector<uint64_t> doomed = s.torn_down(device, context);
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

bool visit_pending_in_signal_handler(void (*write)(std::string_view, void*), void* arg) {
  State* s = g_state.load(std::memory_order_acquire);
  if (!s || !try_lock_for_a_second(s->mu)) return false;
  s->pending.for_each_chunk([&](std::string_view c) { write(c, arg); });
  s->mu.unlock();
  return true;
}

namespace {

// What the snapshots' readings cost, for the exit log (CUMEMTRACE_LOG=info): one look
// tells whether they could weigh on a job (docs/validation.md section 16: they did not).
struct SamplingCost {
  std::atomic<uint64_t> snapshots{0}, samplings{0}, nvml_ns{0}, nvml_max_ns{0}, driver_ns{0}, driver_max_ns{0};
  static void raise(std::atomic<uint64_t>& max, uint64_t v) {
    for (uint64_t m = max.load(std::memory_order_relaxed); v > m && !max.compare_exchange_weak(m, v);) {}
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

// A reading that came after its snapshot went without it: a snapshot of its own moment.
void append_late_reading(const NvmlReading& r) {
  State* s = g_state.load(std::memory_order_acquire);
  if (!s) return;
  DeviceSamples samples;
  samples.seq_before = r.seq_before;
  for (const auto& [dev, figures] : r.figures) samples.devices[dev].nvml = figures;
  std::lock_guard lock(s->mu);
  if (s->ended) return;
  s->append_snapshot(format::SnapshotReason::kLateReading, samples, false);
  g_sampling_cost.snapshots.fetch_add(1, std::memory_order_relaxed);  // one count per snapshot written
  g_sampling_cost.add(0, 0);
}

// NVML (on the reader thread, sampler.h) and the driver (here, meanwhile, and only
// outside captures), outside the tracker's lock.
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
  // NVML is not CUDA: a capture does not see it (checked on the H200, docs/validation.md).
  auto reading = std::make_shared<NvmlReading>();
  reading->uuids = uuids;
  reading->seq_before = out.seq_before;
  NvmlTicket ticket(reading, append_late_reading);
  const uint64_t t0 = now_ns();
  {
    const ForeignCall foreign;  // the driver may use the loader inside (loader_lock.h)
    const OwnCudaCalls own;
    out.capture_open = !own;
    if (own) {
      for (const auto& [dev, pool] : pools) out.devices[dev].pool_reserved = pool_reserved_bytes(pool);
      for (int32_t dev : ordinals) out.devices[dev].graph = graph_mem_figures(dev);
    }
  }
  const uint64_t t1 = now_ns();
  if (ticket.wait()) {
    for (const auto& [dev, figures] : reading->figures) out.devices[dev].nvml = figures;
  } else {
    out.nvml_missed = !uuids.empty();
  }
  g_sampling_cost.add(now_ns() - t1, t1 - t0);
  return out;
}

}  // namespace

void take_snapshot(format::SnapshotReason reason) {
  State& s = state();
  g_sampling_cost.snapshots.fetch_add(1, std::memory_order_relaxed);
  for (int attempt = 1;; ++attempt) {
    const DeviceSamples samples = sample_devices();
    std::lock_guard lock(s.mu);
    // A reading that missed its wait is not asked again: the next one would wait too.
    if (s.append_snapshot(reason, samples, attempt < 3 && !samples.nvml_missed)) return;
  }
}

void log_sampling_cost() {
  const SamplingCost& c = g_sampling_cost;
  log_info(
      "snapshots: {} ({} samplings); NVML {:.3f} ms in all, {:.3f} ms at most; driver {:.3f} ms in all, {:.3f} ms at "
      "most",
      c.snapshots.load(), c.samplings.load(), c.nvml_ns.load() / 1e6, c.nvml_max_ns.load() / 1e6,
      c.driver_ns.load() / 1e6, c.driver_max_ns.load() / 1e6);
}

bool track_mark(std::string_view name, format::MarkSource source) {
  const bool end = source == format::MarkSource::kNvtxPop || source == format::MarkSource::kNvtxEnd ||
                   source == format::MarkSource::kTagPop;
  if (!tracing_enabled() || !g_state.load(std::memory_order_acquire)) return false;
  const ErrnoGuard keep_errno;
  format::MarkRecord m{};
  m.tid = thread_state().tid;
  m.source = uint8_t(source);
  State& s = state();
  std::lock_guard lock(s.mu);
  m.time_ns = now_ns();  // under the lock, as an event's: the file stays in time order
  if (s.ended) return false;
  if (s.pending.size() >= config().buffer_limit_bytes) {
    ++s.records_dropped;
    return false;
  }
  put_record(s.pending, end ? format::RecordType::kRangeEnd : format::RecordType::kMark, m,
             std::string(name.substr(0, 4096)));
  return true;
}

bool track_nvtx_mem(const NvtxMemDraft* drafts, size_t n, bool with_stack) {
  if (!n || !tracing_enabled() || !g_state.load(std::memory_order_acquire)) return false;
  const ErrnoGuard keep_errno;
  RawStack stack;
  PyRawStack python;
  stack.count = 0;
  if (with_stack) walk_stacks(stack, python);
  const uint32_t tid = thread_state().tid;
  State& s = state();
  std::lock_guard lock(s.mu);
  const uint64_t time = now_ns();
  if (s.ended) return false;
  if (s.pending.size() >= config().buffer_limit_bytes) {
    s.records_dropped += n;
    return false;
  }
  const auto [native, py] = intern_stacks(s, tid, stack, python);
  for (size_t i = 0; i < n; ++i) {
    const NvtxMemDraft& d = drafts[i];
    const format::NvtxMemRecord r{time, d.heap, d.address, d.size, tid, native, py, uint8_t(d.op), d.usage, 0};
    put_record(s.pending, format::RecordType::kNvtxMem, r, std::string(d.name.substr(0, 4096)));
  }
  return true;
}

namespace {
void put_block_source(State& s, uint64_t time, const BlockSourceFacts& src, format::BlockSourceState state,
                      std::string_view reason) {
  const format::BlockSourceRecord r{time, -1, src.flags, uint8_t(src.allocator), uint8_t(state), 0, 0};
  put_record(s.pending, format::RecordType::kBlockSource, r, std::string(src.version.substr(0, 256)),
             std::string(reason), std::string(src.settings.substr(0, 4096)));
}
}  // namespace

void track_block(const BlockDraft& d, const BlockSourceFacts& src) {
  if (!tracing_enabled() || g_blocks_off.load(std::memory_order_relaxed)) return;
  const ErrnoGuard keep_errno;
  RawStack stack;
  PyRawStack python;
  stack.count = 0;
  const bool allocates = d.op == format::BlockOp::kAlloc || d.op == format::BlockOp::kOom;
  if (allocates) walk_stacks(stack, python);
  const uint32_t tid = thread_state().tid;
  char refused[200] = "";
  {
    State& s = state();
    std::lock_guard lock(s.mu);
    const uint64_t time = now_ns();  // under the lock, as an event's
    if (s.ended || g_blocks_off.load(std::memory_order_relaxed)) return;
    if (s.pending.size() >= config().buffer_limit_bytes) {
      ++s.records_dropped;
      return;
    }
    if (!s.blocks_on) {
      put_block_source(s, time, src, format::BlockSourceState::kOn, {});
      s.blocks_on = true;
    }
    const auto dev = s.devices.find(d.device);
    if (d.op == format::BlockOp::kAlloc && (dev == s.devices.end() || !dev->second.frag.covers(d.address, d.size))) {
      g_blocks_off.store(true, std::memory_order_relaxed);
      std::snprintf(refused, sizeof refused,
                    "a block of %llu B at 0x%llx on device %d lies in no device memory the driver gave this "
                    "process: the allocator's reports are not what the tracer reads them as",
                    static_cast<unsigned long long>(d.size), static_cast<unsigned long long>(d.address), d.device);
      put_block_source(s, time, src, format::BlockSourceState::kOff, refused);
    } else {
      const auto [native, py] = intern_stacks(s, tid, stack, python);
      format::BlockEventRecord r{};
      r.time_ns = time, r.address = d.address, r.size = d.size, r.requested = d.requested;
      r.stream = format::kUnknown64, r.pool[0] = r.pool[1] = format::kUnknown64;
      r.allocated = d.allocated, r.reserved = d.reserved, r.tid = tid;
      r.stack_id = native, r.python_stack_id = py;
      r.device = int16_t(d.device), r.op = uint8_t(d.op), r.allocator = uint8_t(src.allocator), r.flags = d.flags;
      put_record(s.pending, format::RecordType::kBlockEvent, r);
    }
  }
  if (*refused) log_warn("block events off: {}", refused);
}

bool device_stats(std::vector<DeviceStats>& out) {
  State* s = g_state.load(std::memory_order_acquire);
  if (!s) return false;
  std::lock_guard lock(s->mu);
  for (const auto& [d, ds] : s->devices) out.push_back({d, ds.device_bytes, ds.peak, ds.peak_since_reset, 0, 0});
  s->each_since_reset([&](const Allocation& a) {
    for (auto& o : out)
      if (o.device == a.device) o.live_since_reset_bytes += a.size, ++o.live_since_reset_count;
  });
  return true;
}

bool live_sites(std::vector<LiveSite>& out, bool by_python, bool at_peak) {
  State* s = g_state.load(std::memory_order_acquire);
  if (!s) return false;
  std::lock_guard lock(s->mu);
  std::map<std::tuple<int32_t, uint32_t, uint32_t>, LiveSite> by_site;
  const auto add = [&](const Allocation& a) {
    const uint32_t python = by_python ? a.python_stack : 0;
    LiveSite& l = by_site[{a.device, a.stack, python}];
    l.device = a.device, l.stack = a.stack, l.python_stack = python, l.bytes += a.size, ++l.count;
  };
  if (at_peak) s->each_at_peak_since_reset(add);
  else s->each_since_reset(add);
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

std::vector<PythonFrameText> python_frames(uint32_t id, size_t max) {
  std::vector<PythonFrameText> out;
  State* s = g_state.load(std::memory_order_acquire);
  if (!s) return out;
  std::lock_guard lock(s->mu);
  for (const PyStackTree::Frame& f : s->python_stacks.frames(id, max)) out.push_back({*f.file, *f.function, f.line});
  return out;
}

bool reset_peak() {
  g_peak_sites_asked.store(true);
  State* s = g_state.load(std::memory_order_acquire);
  if (!s) return false;
  std::lock_guard lock(s->mu);
  s->reset_peak();
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
  if (s.ended) return;
  put_record(s.pending, format::RecordType::kEnd, format::EndRecord{now_ns(), s.events_written, s.dropped()});
  s.ended = true;
}

namespace {
#pragma pack(push, 1)
struct EndWithReason {
  format::EndRecord end;
  uint32_t reason;  // format::EndReason; its string follows
};
#pragma pack(pop)
}  // namespace

void append_exec_end(std::string_view target) {
  State& s = state();
  std::lock_guard lock(s.mu);
  const EndWithReason rec{{now_ns(), s.events_written, s.dropped()}, uint32_t(format::EndReason::kExec)};
  put_record(s.pending, format::RecordType::kEnd, rec, target);
}

bool append_program_records(std::string_view encoded) {
  State* s = g_state.load(std::memory_order_acquire);  // never starts a trace of its own
  if (!s || !tracing_enabled()) return false;
  std::lock_guard lock(s->mu);
  if (s->ended || s->pending.size() + encoded.size() > config().buffer_limit_bytes) return false;
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
  g_blocks_off.store(false, std::memory_order_relaxed);  // the child's trace checks its own blocks
  g_sampling_cost.reset();
  sampler_after_fork_child();
}

}  // namespace cumemtrace::interpose
