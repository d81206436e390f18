// Native stacks: captured with libunwind in the hook, deduplicated into a prefix tree.
//
// The tree is rooted at the outermost frame, so stacks that share callers share nodes
// and a stack is named by one id, its innermost node (as heaptrack's TraceTree does).
// Each node is written to the trace once, the first time it is created, as a
// StackNodeRecord; events then carry only the id. Frames inside libcumemtrace.so are
// dropped wherever they sit, so a stack shows only the program's and CUDA's frames.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cumemtrace::interpose {

struct RawStack {
  static constexpr uint32_t kMax = 256;
  uint32_t count = 0;
  uint64_t ip[kMax];  // innermost first
};

// Unwinds the calling thread (outside any lock of ours: libunwind may take the loader
// lock through dl_iterate_phdr). Captures at most `depth` frames beyond our own.
void capture_stack(RawStack& out, uint32_t depth);

class StackTree {
 public:
  // Returns the id of `s`, appending StackNodeRecords for nodes not seen before to `out`.
  uint32_t intern(const RawStack& s, std::string& out);
  // The return addresses of stack `id`, innermost first, at most `max`; returns how many.
  uint32_t frames(uint32_t id, uint64_t* out, uint32_t max) const;

 private:
  struct EdgeHash {
    size_t operator()(const std::pair<uint32_t, uint64_t>& e) const {
      return std::hash<uint64_t>()(e.second * 0x9E3779B97F4A7C15ull ^ e.first);
    }
  };
  std::unordered_map<std::pair<uint32_t, uint64_t>, uint32_t, EdgeHash> children_;  // (parent, ip) -> id
  uint32_t next_id_ = 1;
  std::vector<std::pair<uint32_t, uint64_t>> nodes_{{0, 0}};  // id -> (parent, ip), for frames()
};

}  // namespace cumemtrace::interpose
