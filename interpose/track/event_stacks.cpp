#include "track/event_stacks.h"

#include <algorithm>
#include <atomic>
#include <x86intrin.h>

#include "base/config.h"
#include "base/log.h"
#include "stacks/walk_stats.h"

namespace cumemtrace::interpose {
namespace {

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

}  // namespace

void walk_stacks(RawStack& stack, PyRawStack& python, bool block) {
  const bool stats = walk_stats_on();
  const uint64_t t0 = stats ? __rdtsc() : 0;
  walk_python(python);
  const uint64_t t1 = stats ? __rdtsc() : 0;
  const uint32_t depth = !python.count ? config().stack_depth
                         : block       ? config().block_native_depth
                                       : config().python_native_depth;
  walk_stack(stack, depth);
  if (stats) {
    const uint64_t t2 = __rdtsc();
    hook_part_add(HookPart::kPythonWalk, t1 - t0);
    hook_part_add(HookPart::kNativeWalk, t2 - t1);
  }
  if (config().check_stacks) check_native_walk(stack, depth);
}

std::pair<uint32_t, uint32_t> intern_stacks(State& s, uint32_t tid, const RawStack& stack, const PyRawStack& python) {
  State::Memos& memo = s.memos[tid % State::kMemos];
  const uint64_t t0 = walk_stats_on() ? __rdtsc() : 0;
  const uint64_t hash = StackPairCache::hash(stack, python);
  StackPairCache::Ids ids{};
  const bool seen = memo.seen.find(hash, stack, python, ids);
  if (seen && t0) hook_part_add(HookPart::kInternSeen, __rdtsc() - t0);
  if (!seen) {
    ids.native = stack.count ? s.stacks.intern(stack, s.new_nodes, memo.native) : 0;
    ids.python = python.count ? s.python_stacks.intern(python, s.new_nodes, memo.python) : 0;
  }
  if (config().check_stacks) check_stacks(s, stack, python, ids.native, ids.python);
  if (!s.new_nodes.empty()) {
    s.pending.append(s.new_nodes);
    s.new_nodes.clear();
  }
  if (!seen) memo.seen.keep(hash, stack, python, ids);
  return {ids.native, ids.python};
}

}  // namespace cumemtrace::interpose
