#include "render/views/allocation_tree.h"

#include <algorithm>

#include "render/export/export_frames.h"
#include "stacks/call_site_rule.h"

namespace cumemtrace {

std::vector<const AllocationTree::Child*> AllocationTree::ranked() const {
  std::vector<const Child*> kids;
  for (const auto& c : children) kids.push_back(&c);
  std::stable_sort(kids.begin(), kids.end(), [](const Child* a, const Child* b) {
    return a->second.bytes != b->second.bytes ? a->second.bytes > b->second.bytes
                                              : a->second.allocations > b->second.allocations;
  });
  return kids;
}

AllocationTree allocation_tree(const AllocationStats& st, const Stacks& stacks, bool top_down) {
  ExportFrames frames(stacks);
  AllocationTree root;
  for (const auto& [key, a] : st.stacks) {
    std::vector<std::string> path;
    const std::vector<Frame>& stack = frames.of(key.first, key.second);
    const size_t startup = libc_startup_frames(stack);
    for (size_t i = 0; i + startup < stack.size(); ++i) path.push_back(describe(stack[i], FrameStyle::kExport));
    if (path.empty()) path.push_back("[no stack]");
    if (top_down) std::reverse(path.begin(), path.end());
    AllocationTree* n = &root;
    for (const std::string& label : path) {
      n = &n->children[label];
      n->bytes += a.bytes;
      n->allocations += a.allocations;
    }
  }
  root.bytes = st.bytes, root.allocations = st.allocations;
  return root;
}

}  // namespace cumemtrace
