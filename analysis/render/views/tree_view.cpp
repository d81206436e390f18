// `report --view tree` and `--view callers`: heaptrack's top-down and bottom-up trees
// (allocation_tree.h), in text.
#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"
#include "render/views/allocation_tree.h"
#include "render/views/views.h"

namespace cumemtrace {
namespace {

// At most `top` children of each node, each `depth` levels deep at most.
void write_tree_level(std::ostream& out, const AllocationTree& n, size_t level, size_t depth, size_t top) {
  const auto kids = n.ranked();
  const std::string indent(2 * level + 2, ' ');
  for (size_t i = 0; i < kids.size() && i < top; ++i) {
    const AllocationTree& c = kids[i]->second;
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
  write_tree_level(out, allocation_tree(st, ctx.stacks, true), 0, SIZE_MAX, ctx.top);
}

void write_callers_view(std::ostream& out, const AllocationStats& st, const ViewContext& ctx) {
  tree_header(out, st, "Bottom-up: each call site's frame, below it the frames that called it, --frames deep");
  write_tree_level(out, allocation_tree(st, ctx.stacks, false), 0, ctx.frames, ctx.top);
}

}  // namespace cumemtrace
