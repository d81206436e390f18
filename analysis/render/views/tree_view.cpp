// `report --view tree` and `--view callers`: heaptrack's top-down and bottom-up trees, for
// device memory. Every allocation's stack as the flame graph draws it (export_frames.h:
// from the call site outward, Python frames merged in, libc's start-up frames left out)
// adds its bytes and its count to each frame on the path: top-down from the outermost
// frame (what each part of the program allocated below it), bottom-up from the call site
// (who called each site, and how much through each caller). Frames of one name at one
// level are one node, so a function called from two places is two nodes top-down and one
// bottom-up, heaptrack's merging.
#include <algorithm>
#include <map>

#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"
#include "render/export/export_frames.h"
#include "render/views/views.h"
#include "stacks/call_site_rule.h"

namespace cumemtrace {
namespace {

struct TreeNode {
  uint64_t bytes = 0, allocations = 0;
  std::map<std::string, TreeNode> children;
};

TreeNode build_tree(const AllocationStats& st, const Trace& trace, bool top_down) {
  ExportFrames frames(trace);
  TreeNode root;
  for (const auto& [key, a] : st.stacks) {
    std::vector<std::string> path;
    const std::vector<Frame>& stack = frames.of(key.first, key.second);
    const size_t startup = libc_startup_frames(stack);
    for (size_t i = 0; i + startup < stack.size(); ++i) path.push_back(describe(stack[i], FrameStyle::kExport));
    if (path.empty()) path.push_back("[no stack]");
    if (top_down) std::reverse(path.begin(), path.end());
    TreeNode* n = &root;
    for (const std::string& label : path) {
      n = &n->children[label];
      n->bytes += a.bytes;
      n->allocations += a.allocations;
    }
  }
  return root;
}

// The children with the most bytes first (then the most allocations, then by name), at
// most `top`, each `depth` levels deep at most.
void write_tree_level(std::ostream& out, const TreeNode& n, size_t level, size_t depth, size_t top) {
  std::vector<const std::pair<const std::string, TreeNode>*> kids;
  for (const auto& c : n.children) kids.push_back(&c);
  std::stable_sort(kids.begin(), kids.end(), [](const auto* a, const auto* b) {
    return a->second.bytes != b->second.bytes ? a->second.bytes > b->second.bytes
                                              : a->second.allocations > b->second.allocations;
  });
  const std::string indent(2 * level + 2, ' ');
  for (size_t i = 0; i < kids.size() && i < top; ++i) {
    const TreeNode& c = kids[i]->second;
    out << indent << printable(kids[i]->first) << ": " << iec_exact(c.bytes) << ", "
        << count_of(c.allocations, "allocation") << "\n";
    if (level + 1 < depth) write_tree_level(out, c, level + 1, depth, top);
  }
  if (kids.size() > top) out << indent << "... and " << count_of(kids.size() - top, "more frame") << " (--top)\n";
}

void tree_header(std::ostream& out, const AllocationStats& st, const char* what) {
  out << what << " (device memory: " << count_of(st.allocations, "allocation") << ", " << iec_exact(st.bytes)
      << " in all)\n";
  if (st.stacks.empty()) out << "  none\n";
}

}  // namespace

void write_tree_view(std::ostream& out, const AllocationStats& st, const ViewContext& ctx) {
  tree_header(out, st, "Top-down tree: each frame with the bytes and allocations made below it");
  write_tree_level(out, build_tree(st, ctx.stacks.trace(), true), 0, SIZE_MAX, ctx.top);
}

void write_callers_view(std::ostream& out, const AllocationStats& st, const ViewContext& ctx) {
  tree_header(out, st, "Bottom-up: each call site's frame, below it the frames that called it, --frames deep");
  write_tree_level(out, build_tree(st, ctx.stacks.trace(), false), 0, ctx.frames, ctx.top);
}

}  // namespace cumemtrace
