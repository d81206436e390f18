// Python frames of an event (trace 1.6), and the stack that merges them into the native
// one, as memray's native mode does.
//
// The merge rule: every native frame of the interpreter's evaluation loop
// (_PyEval_EvalFrameDefault) ran a group of Python frames: one entry frame
// (kPyFrameEntry) and the frames it called inside that same loop, up to the next entry
// frame (3.11+ runs many Python frames per C-level call; 3.10 and older, one each).
// Groups and evaluation-loop frames are paired from the innermost outwards, because the
// native stack is the one cut short (CUMEMTRACE_DEPTH keeps its innermost frames): groups
// left over are the outermost and go after the last native frame. A native stack
// without symbols has no evaluation-loop frame to pair with: all the Python frames then
// follow the native ones.
#pragma once

#include <cstdint>
#include <vector>

#include "read/reader.h"
#include "stacks/stacks.h"

namespace cumemtrace {

// Innermost first; empty for 0, and cut at a missing node or a loop in damaged files.
std::vector<Frame> python_frames(const Trace& trace, uint32_t python_stack_id);

// Whether a native frame is the evaluation loop that runs Python frames.
bool is_eval_frame(const Frame& f);

// `native` and `python` innermost first (python as python_frames gives them); the merged
// stack, innermost first: each evaluation-loop frame replaced by its Python frames.
std::vector<Frame> merge_stacks(const std::vector<Frame>& native, const std::vector<Frame>& python);

}  // namespace cumemtrace
