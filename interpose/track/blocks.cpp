// A caching allocator's blocks (hooks_allocator.h), each checked against the device
// memory the driver gave (docs/trace-format.md, BlockSource).
#include "track/tracker.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

#include "base/config.h"
#include "base/encode.h"
#include "base/errno_guard.h"
#include "base/log.h"
#include "base/thread_state.h"
#include "track/event_stacks.h"
#include "track/tracker_state.h"

namespace cumemtrace::interpose {
namespace {

std::atomic<bool> g_blocks_off{false};  // a block failed the check: no more block events

void put_block_source(State& s, uint64_t time, const BlockSourceFacts& src, format::BlockSourceState state,
                      std::string_view reason) {
  const format::BlockSourceRecord r{time, -1, src.flags, uint8_t(src.allocator), uint8_t(state), 0, 0};
  put_record(s.pending, format::RecordType::kBlockSource, r, std::string(src.version.substr(0, 256)),
             std::string(reason), std::string(src.settings.substr(0, 4096)));
}
}  // namespace

void blocks_after_fork_child() {
  g_blocks_off.store(false, std::memory_order_relaxed);  // the child's trace checks its own blocks
}

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

}  // namespace cumemtrace::interpose
