// Native stacks deduplicated into a prefix tree rooted at the outermost frame: stacks
// that share callers share nodes, and a stack is named by one id, its innermost node (as
// heaptrack's TraceTree does). Each node is written to the trace once, when created, as
// a StackNodeRecord; events then carry only the id.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "stacks/stack.h"

namespace cumemtrace::interpose {

class StackTree {
 public:
  // One thread's previous stack, innermost frame first, and the node of each of its
  // outer parts (node[k]: the outermost k + 1 frames). Node ids are never reused, so a memo stays right for
  // as long as its tree lives, whichever thread last wrote it: it only saves work.
  struct Memo {
    std::vector<uint64_t> ip;
    std::vector<uint32_t> node;
  };

  // Returns the id of `s`, appending StackNodeRecords for nodes not seen before to `out`.
  uint32_t intern(const RawStack& s, std::string& out);
  // The same id, interning only the frames inside the outer part `s` shares with `memo`
  // (consecutive events of a thread share most of their stack: docs/performance.md, "Stacks
  // from the previous event"), and `memo`
  // made `s`'s.
  uint32_t intern(const RawStack& s, std::string& out, Memo& memo);
  // The id of `s` if it is the stack a recent intern() of the same return addresses
  // gave, else 0: one hash of the whole stack and a walk up a vector, instead of one
  // hash lookup per frame (a program allocates from few stacks, again and again).
  uint32_t recent(const RawStack& s) const;
  // The return addresses of stack `id`, innermost first, at most `max`; returns how many.
  uint32_t frames(uint32_t id, uint64_t* out, uint32_t max) const;

 private:
  // The node of frame `ip` called from node `parent`, made (and written) if new.
  uint32_t child(uint32_t parent, uint64_t ip, std::string& out);

  struct EdgeHash {
    size_t operator()(const std::pair<uint32_t, uint64_t>& e) const {
      return std::hash<uint64_t>()(e.second * 0x9E3779B97F4A7C15ull ^ e.first);
    }
  };
  std::unordered_map<std::pair<uint32_t, uint64_t>, uint32_t, EdgeHash> children_;  // (parent, ip) -> id
  uint32_t next_id_ = 1;
  std::vector<std::pair<uint32_t, uint64_t>> nodes_{{0, 0}};               // id -> (parent, ip), for frames()
  static constexpr size_t kRecentSlots = 4096;                             // a power of two
  std::vector<uint32_t> recent_ = std::vector<uint32_t>(kRecentSlots, 0);  // stack hash -> id
};

}  // namespace cumemtrace::interpose
