// Interning a stack by its difference from the previous stack of the same thread (issue
// 26, "stacks for almost nothing"): consecutive events of a thread share most of their
// frames from the outer end, and a prefix tree (stack_tree.h, python_tree.h) names each
// such shared part by one node, already found for the previous event.
//
// Why this is sound: a tree's node is a function of the frames of its prefix alone (the
// frames as recorded: return addresses, or a Python frame's code, names, line table and
// offset), and ids are never reused. So when the outer `same` frames of a stack equal, as
// recorded, the outer `same` frames of the previous one, the previous one's node for
// them is the node a full intern would find. Nothing else is assumed: not that a frame
// at the same address is the same activation (it may not be: python_tree.h says where
// that fails), nor whose memo it is. A memo only saves lookups.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace cumemtrace::interpose {

// Interns the stack of `n` frames given outermost first by `frame_at(k)`, starting from
// the node of the longest outer part equal to `frames` (the previous stack, outermost
// first; `nodes[k]` the node of its frames 0..k), and makes `frames` and `nodes` this
// stack's (an empty stack leaves them be). `child(parent, frame)` interns one frame. Returns
// the stack's node, 0 if empty.
template <class Frame, class FrameAt, class Child>
uint32_t intern_with_memo(uint32_t n, FrameAt frame_at, std::vector<Frame>& frames, std::vector<uint32_t>& nodes,
                          Child child) {
  // An event without a stack (a free, by default) leaves the memo to the next one with.
  if (n == 0) return 0;
  const uint32_t known = std::min(n, uint32_t(frames.size()));
  uint32_t same = 0;
  while (same < known && frames[same] == frame_at(same)) ++same;
  // Capacity stays: once a thread has been this deep, no allocation here.
  frames.resize(n);
  nodes.resize(n);
  uint32_t node = same ? nodes[same - 1] : 0;
  for (uint32_t k = same; k < n; ++k) {
    frames[k] = frame_at(k);
    nodes[k] = node = child(node, frames[k]);
  }
  return node;
}

}  // namespace cumemtrace::interpose
