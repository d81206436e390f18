// The records that are not a hooked call's events: marks and ranges, pools' NVTX memory
// records, the End record, and the records a program encodes itself (the C API).
#include "track/tracker.h"

#include <atomic>
#include <mutex>
#include <string>
#include <string_view>

#include <cumemtrace/record_encode.h>

#include "base/config.h"
#include "base/errno_guard.h"
#include "base/thread_state.h"
#include "track/event_stacks.h"
#include "track/tracker_state.h"
#include "track/writer_thread.h"

namespace cumemtrace::interpose {

bool track_mark(std::string_view name, format::MarkSource source) {
  const bool end = source == format::MarkSource::kNvtxPop || source == format::MarkSource::kNvtxEnd ||
                   source == format::MarkSource::kTagPop;
  if (!tracing_enabled()) return false;
  const ErrnoGuard keep_errno;
  format::MarkRecord m{};
  m.tid = thread_state().tid;
  m.source = uint8_t(source);
  const std::string text(name.substr(0, kMaxNameBytes));
  const auto put = [&](auto& out) {
    if (end) put_record<format::RecordType::kRangeEnd>(out, m, text);
    else put_record<format::RecordType::kMark>(out, m, text);
  };
  if (!started_state()) {  // before the first CUDA call: kept for the trace's start
    const int kept = append_before_start([&](std::string& out) {
      m.time_ns = now_ns();  // under the lock that orders them
      put(out);
    });
    if (kept != 0) return kept > 0;
  }
  State& s = state();
  std::lock_guard lock(s.mu);
  m.time_ns = now_ns();  // under the lock, as an event's: the file stays in time order
  if (s.ended) return false;
  if (s.pending.size() >= config().buffer_limit_bytes) {
    ++s.records_dropped;
    return false;
  }
  put(s.pending);
  return true;
}

bool track_nvtx_mem(const NvtxMemDraft* drafts, size_t n, bool with_stack) {
  if (!n || !tracing_enabled() || !started_state()) return false;
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
    put_record<format::RecordType::kNvtxMem>(s.pending, r, std::string(d.name.substr(0, kMaxNameBytes)));
  }
  return true;
}

namespace {
// Counted apart from the State: a string is often registered before the first CUDA call
// starts the trace, and its count must still reach it.
std::atomic<uint64_t> g_bounded[State::kBoundedKinds];
std::atomic<uint32_t> g_bounded_cap[State::kBoundedKinds];
}  // namespace

void put_bounded_counts(State& s) {
  for (uint32_t what = 0; what < State::kBoundedKinds; ++what) {
    const uint64_t dropped = g_bounded[what].load(std::memory_order_relaxed);
    if (dropped == s.bounded_written[what]) continue;
    const format::BoundedRecord r{now_ns(), what, g_bounded_cap[what].load(std::memory_order_relaxed), dropped};
    put_record<format::RecordType::kBounded>(s.pending, r);
    s.bounded_written[what] = dropped;
  }
}

void track_bounded(format::BoundedWhat what, uint32_t cap) {
  const uint32_t i = uint32_t(what);
  if (i >= State::kBoundedKinds) return;
  g_bounded_cap[i].store(cap, std::memory_order_relaxed);
  // The first of a kind is written at once, so that a trace cut before the next flush still
  // says something was bounded; later ones at each flush, not a record each.
  if (g_bounded[i].fetch_add(1, std::memory_order_relaxed) != 0) return;
  State* s = started_state();
  if (!s) return;
  std::lock_guard lock(s->mu);
  if (!s->ended) put_bounded_counts(*s);
}

void bounded_after_fork_child() {
  for (auto& n : g_bounded) n.store(0, std::memory_order_relaxed);
}

namespace {
std::atomic<int32_t> g_exit_status{-1};  // what exit() or _exit() was given, 0-255; -1 unknown
}  // namespace

void note_exit_status(int status) { g_exit_status.store(status & 0xff, std::memory_order_relaxed); }

void append_end() {
  State& s = state();
  std::lock_guard lock(s.mu);
  if (s.ended) return;
  put_bounded_counts(s);
  // 1.10: the reason and the exec target, empty for an exit; 1.15: an exit's status.
  put_extended_record<format::RecordType::kEnd>(s.pending, format::EndRecord{now_ns(), s.events_written, s.dropped()},
                                                Strings{}, uint32_t(format::EndReason::kExit), std::string_view(),
                                                g_exit_status.load(std::memory_order_relaxed));
  s.ended = true;
}

void append_exec_end(std::string_view target) {
  State& s = state();
  std::lock_guard lock(s.mu);
  put_bounded_counts(s);
  put_extended_record<format::RecordType::kEnd>(s.pending, format::EndRecord{now_ns(), s.events_written, s.dropped()},
                                                Strings{}, uint32_t(format::EndReason::kExec), target);
}

bool append_program_records(std::string_view encoded) {
  State* s = started_state();  // never starts a trace of its own
  if (!s || !tracing_enabled()) return false;
  std::lock_guard lock(s->mu);
  if (s->ended || s->pending.size() + encoded.size() > config().buffer_limit_bytes) return false;
  s->pending.append(encoded);
  return true;
}

}  // namespace cumemtrace::interpose
