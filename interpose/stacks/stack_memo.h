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
#include <cstring>
#include <type_traits>
#include <vector>

namespace cumemtrace::interpose {

// Interns the stack `s` of `n` frames, innermost first, starting from the node of the
// longest outer part equal to `frames` (the previous stack, innermost first as well;
// `nodes[k]` the node of its outermost k + 1 frames), and makes `frames` and `nodes` this
// stack's (an empty stack leaves them be). `child(parent, frame)` interns one frame.
// Returns the stack's node, 0 if empty. Frames are compared as bytes: a Frame has no
// padding, and two frames that PyStackTree or StackTree would tell apart differ in one.
template <class Frame, class Child>
uint32_t intern_with_memo(const Frame* s, uint32_t n, std::vector<Frame>& frames, std::vector<uint32_t>& nodes,
                          Child child) {
  static_assert(std::has_unique_object_representations_v<Frame>);
  // An event without a stack (a free, by default) leaves the memo to the next one with.
  if (n == 0) return 0;
  const uint32_t m = uint32_t(frames.size());
  // The same stack again, the common case: one memcmp (a frame at a time cost ~30
  // instructions a Python frame, more than the whole-stack hash this replaces).
  if (m == n && std::memcmp(s, frames.data(), n * sizeof(Frame)) == 0) return nodes[n - 1];
  const uint32_t known = std::min(n, m);
  uint32_t same = 0;
  while (same < known && std::memcmp(&s[n - 1 - same], &frames[m - 1 - same], sizeof(Frame)) == 0) ++same;
  // Capacity stays: once a thread has been this deep, no allocation here.
  frames.assign(s, s + n);
  nodes.resize(n);
  uint32_t node = same ? nodes[same - 1] : 0;
  for (uint32_t k = same; k < n; ++k) nodes[k] = node = child(node, s[n - 1 - k]);
  return node;
}

}  // namespace cumemtrace::interpose
