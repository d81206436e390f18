// A caching allocator's blocks (hooks_allocator.h), each checked against the device
// memory the driver gave (docs/trace-format.md, BlockSource).
#include "track/tracker.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <x86intrin.h>
#include <string>
#include <utility>

#include <cumemtrace/record_encode.h>

#include "base/config.h"
#include "base/errno_guard.h"
#include "base/log.h"
#include "base/thread_state.h"
#include "stacks/walk_stats.h"
#include "track/context_tags.h"
#include "track/event_stacks.h"
#include "track/tracker_state.h"

namespace cumemtrace::interpose {
namespace {

std::atomic<bool> g_blocks_off{false};         // a block failed the check: no more block events
std::atomic<bool> g_trace_entries_off{false};  // a trace entry failed its check: none merged or written

void put_block_source(State& s, uint64_t time, const BlockSourceFacts& src, uint32_t flags,
                      format::BlockSourceState state, std::string_view reason) {
  const format::BlockSourceRecord r{time, -1, flags, uint8_t(src.allocator), uint8_t(state), 0, 0};
  put_record<format::RecordType::kBlockSource>(s.pending, r, std::string(src.version.substr(0, 256)),
                                               std::string(reason), std::string(src.settings.substr(0, 4096)));
}

uint32_t sources_of(uint16_t draft_flags) {
  return (draft_flags & format::kBlockUsageReport ? format::kBlockSourceUsageReports : 0u) |
         (draft_flags & format::kBlockTraceEntry ? format::kBlockSourceTraceEntries : 0u);
}

// Whether the driver gave this process exactly [address, address+size) (a segment of a
// caching allocator is one cudaMalloc).
bool driver_gave_exactly(const State& s, int32_t device, uint64_t address, uint64_t size) {
  const auto dev = s.devices.find(device);
  if (dev == s.devices.end()) return false;
  const auto& live = dev->second.frag.live();
  const auto p = live.lower_bound(address);
  return !live.is_end(p) && live.at(p).key == address && live.at(p).value == size;
}

bool driver_covers(const State& s, int32_t device, uint64_t address, uint64_t size) {
  const auto dev = s.devices.find(device);
  return dev != s.devices.end() && dev->second.frag.covers(address, size);
}

// Why `d` does not check out against the driver's events ("" when it does): the reason an
// `off` record gives, in words.
void check_against_driver(const State& s, const BlockDraft& d, char* why, size_t n) {
  const auto bytes = static_cast<unsigned long long>(d.size);
  const auto at = static_cast<unsigned long long>(d.address);
  if (d.op == format::BlockOp::kAlloc && !driver_covers(s, d.device, d.address, d.size))
    std::snprintf(why, n,
                  "a block of %llu B at 0x%llx on device %d lies in no device memory the driver gave this "
                  "process: the allocator's reports are not what the tracer reads them as",
                  bytes, at, d.device);
  else if (d.op == format::BlockOp::kSegmentAlloc && !driver_gave_exactly(s, d.device, d.address, d.size))
    std::snprintf(why, n,
                  "a segment of %llu B at 0x%llx on device %d is no allocation the driver gave this process: the "
                  "allocator's trace entries are not laid out as the tracer reads them",
                  bytes, at, d.device);
  else if (d.op == format::BlockOp::kSegmentMap && !driver_covers(s, d.device, d.address, d.size))
    std::snprintf(why, n,
                  "a mapping of %llu B at 0x%llx on device %d lies in no mapping the driver made for this process: "
                  "the allocator's trace entries are not laid out as the tracer reads them",
                  bytes, at, d.device);
}

}  // namespace

void blocks_after_fork_child() {
  // The child's trace checks its own blocks.
  g_blocks_off.store(false, std::memory_order_relaxed);
  g_trace_entries_off.store(false, std::memory_order_relaxed);
}

bool block_trace_entries_off() { return g_trace_entries_off.load(std::memory_order_relaxed); }

void refuse_block_trace_entries(const BlockSourceFacts& src, std::string_view reason) {
  if (g_trace_entries_off.exchange(true, std::memory_order_relaxed) || !tracing_enabled()) return;
  {
    State& s = state();
    std::lock_guard lock(s.mu);
    if (s.ended) return;
    put_block_source(s, now_ns(), src, format::kBlockSourceTraceEntries, format::BlockSourceState::kOff, reason);
    s.block_sources_on &= ~format::kBlockSourceTraceEntries;
  }
  log_warn("PyTorch's trace entries not read: {}", reason);
}

void track_block(const BlockDraft& d, const BlockSourceFacts& src) {
  if (!tracing_enabled() || g_blocks_off.load(std::memory_order_relaxed)) return;
  const bool trace_entry = d.flags & format::kBlockTraceEntry;
  if (trace_entry && !(d.flags & format::kBlockUsageReport) && g_trace_entries_off.load(std::memory_order_relaxed))
    return;
  const ErrnoGuard keep_errno;
  const bool stats = walk_stats_on();
  const uint64_t t0 = stats ? __rdtsc() : 0;
  RawStack stack;
  PyRawStack python;
  stack.count = 0;
  const bool allocates = d.op == format::BlockOp::kAlloc || d.op == format::BlockOp::kOom;
  if (allocates) {
    follow_context_tags();
    walk_stacks(stack, python, true);
  }
  const uint32_t tid = thread_state().tid;
  char refused[220] = "";
  bool entries_refused = false;
  const uint64_t t1 = stats ? __rdtsc() : 0;
  {
    State& s = state();
    std::lock_guard lock(s.mu);
    const uint64_t t_locked = stats ? __rdtsc() : 0;
    const uint64_t time = now_ns();  // under the lock, as an event's
    if (stats) {
      hook_part_add(HookPart::kLockWait, t_locked - t1);
      hook_part_add(HookPart::kClock, __rdtsc() - t_locked);
    }
    if (s.ended || g_blocks_off.load(std::memory_order_relaxed)) return;
    if (s.pending.size() >= config().buffer_limit_bytes) {
      ++s.records_dropped;
      return;
    }
    uint16_t flags = d.flags;
    if (trace_entry && g_trace_entries_off.load(std::memory_order_relaxed)) flags &= ~format::kBlockTraceEntry;
    if (!(flags & (format::kBlockUsageReport | format::kBlockTraceEntry))) return;
    if (const uint32_t fresh = sources_of(flags) & ~s.block_sources_on) {
      put_block_source(s, time, src, fresh, format::BlockSourceState::kOn, {});
      s.block_sources_on |= fresh;
    }
    {
      const PartTimer timer(HookPart::kDriverCheck);
      check_against_driver(s, d, refused, sizeof refused);
    }
    if (*refused) {
      const bool whole = d.op == format::BlockOp::kAlloc;
      const uint32_t off = whole ? s.block_sources_on : format::kBlockSourceTraceEntries;
      (whole ? g_blocks_off : g_trace_entries_off).store(true, std::memory_order_relaxed);
      entries_refused = !whole;
      put_block_source(s, time, src, off, format::BlockSourceState::kOff, refused);
      s.block_sources_on &= ~off;
    } else {
      std::pair<uint32_t, uint32_t> ids;
      {
        const PartTimer timer(HookPart::kIntern);
        ids = intern_stacks(s, tid, stack, python);
      }
      const PartTimer timer(HookPart::kEncode);
      const auto [native, py] = ids;
      const bool has_entry = flags & format::kBlockTraceEntry;
      format::BlockEventRecord r{};
      r.time_ns = time, r.address = d.address, r.size = d.size;
      r.requested = has_entry ? d.requested : format::kUnknown64;
      r.stream = has_entry ? d.stream : format::kUnknown64;
      r.pool[0] = has_entry ? d.pool[0] : format::kUnknown64;
      r.pool[1] = has_entry ? d.pool[1] : format::kUnknown64;
      r.allocated = d.allocated, r.reserved = d.reserved, r.tid = tid;
      r.stack_id = native, r.python_stack_id = py;
      r.device = int16_t(d.device), r.op = uint8_t(d.op), r.allocator = uint8_t(src.allocator), r.flags = flags;
      put_record<format::RecordType::kBlockEvent>(s.pending, r);
    }
  }
  if (stats) {
    const uint64_t t2 = __rdtsc();
    hook_part_add(HookPart::kBlockLocked, t2 - t1);
    hook_part_add(HookPart::kBlockWhole, t2 - t0);
  }
  if (*refused && entries_refused) log_warn("PyTorch's trace entries off: {}", refused);
  if (*refused && !entries_refused) log_warn("block events off: {}", refused);
}

}  // namespace cumemtrace::interpose
