// A hooked call's event: its stacks, its device and context, the ledger's change and the
// EventRecord, and a context's teardown (track(), track_teardown()).
#include "track/tracker.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include <cuda.h>
#include <cumemtrace/record_encode.h>

#include "base/config.h"
#include "base/errno_guard.h"
#include "base/thread_state.h"
#include "probe/driver_api.h"
#include "track/context_tags.h"
#include "track/event_stacks.h"
#include "track/tracker_state.h"
#include "track/writer_thread.h"

namespace cumemtrace::interpose {
namespace {

using format::Kind;
using format::Op;

// Contexts from cuCtxCreate ever made: until one is, every allocation is its device's
// primary context's, and no allocation pays a driver call to ask which context is current.
std::atomic<bool> g_created_any{false};

std::atomic<uint64_t> g_failed{0};
std::atomic<uint32_t> g_last_device_plus_one{0};  // any thread's last known device, + 1

// Devices described in the trace so far; checked before locking so that the driver is
// only queried (outside the lock) the first time an ordinal shows up.
std::atomic<uint64_t> g_described{0};
bool described(int32_t d) { return d < 0 || d >= 64 || (g_described.load(std::memory_order_relaxed) >> d & 1); }

}  // namespace

format::EventRecord track(const EventDraft& d, uint16_t api, uint32_t flags) {
  const ErrnoGuard keep_errno;
  RawStack stack;
  PyRawStack python;
  // A free that failed (kEventRestored, or refused with its result) keeps its stack: it is
  // worth a look.
  const bool frees = (d.op == Op::kFree || d.op == Op::kUnmap || d.op == Op::kReserveFree) &&
                     !(flags & format::kEventRestored) && d.result == 0;
  follow_context_tags();
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
      put_record<format::RecordType::kDevice>(s.pending, rec, facts.name);
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
      // 1.6: an event with Python frames carries its Python stack after the EventRecord.
      if (python_stack_id)
        put_extended_record<format::RecordType::kEvent>(s.pending, ev, Strings{}, format::EventPython{python_stack_id});
      else put_record<format::RecordType::kEvent>(s.pending, ev);
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
      put_record<format::RecordType::kEvent>(s.pending, ev);
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

uint64_t failed_allocations() { return g_failed.load(std::memory_order_relaxed); }

void events_after_fork_child() {
  g_described.store(0, std::memory_order_relaxed);
  g_failed.store(0, std::memory_order_relaxed);
}

}  // namespace cumemtrace::interpose
