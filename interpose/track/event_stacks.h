// An event's stacks: walked on the calling thread outside the tracker's lock, interned
// into the state's prefix trees under it, from the part the thread's previous stacks did
// not share (stack_memo.h).
#pragma once

#include <cstdint>
#include <utility>

#include "stacks/python_frames.h"
#include "stacks/stack.h"
#include "track/tracker_state.h"

namespace cumemtrace::interpose {

// The calling thread's Python stack and native stack, the native one as deep as the
// settings allow with Python frames or without (a caching allocator's block event with
// Python frames: CUMEMTRACE_BLOCK_DEPTH_WITH_PYTHON). Outside the tracker's lock.
void walk_stacks(RawStack& stack, PyRawStack& python, bool block = false);

// Both stacks' tree ids (0: none), interned from thread `tid`'s previous stacks, their new
// nodes appended to the records waiting. Under the tracker's lock.
std::pair<uint32_t, uint32_t> intern_stacks(State& s, uint32_t tid, const RawStack& stack, const PyRawStack& python);

}  // namespace cumemtrace::interpose
