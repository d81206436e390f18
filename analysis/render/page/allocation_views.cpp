#include "render/page/allocation_views.h"

#include <cstdint>

#include "base/escape.h"
#include "render/report_parts.h"
#include "render/views/allocation_tree.h"
#include "stacks/python_stacks.h"

namespace cumemtrace {
namespace {

using Json = nlohmann::ordered_json;

// A ranking's row (report_parts.h site_json is the report's `site` alone).
Json ranked_site_json(const SiteAllocations& s, const ViewContext& ctx) {
  const std::vector<Frame> native = s.node ? ctx.stacks.frames(s.node, ctx.frames) : std::vector<Frame>{};
  const std::vector<Frame> python =
      s.python_stack ? python_frames(ctx.stacks.trace(), s.python_stack) : std::vector<Frame>{};
  return Json{{"site", printable(view_site_name(s, ctx))},
              {"library", printable(s.library)},
              {"allocations", s.allocations},
              {"bytes", s.bytes},
              {"temporary", s.temporary},
              {"temporary_bytes", s.temporary_bytes},
              {"frames", frames_json(native)},
              {"python_frames", python_frames_json(python)}};
}

Json ranking_json(const std::vector<const SiteAllocations*>& rows, const ViewContext& ctx) {
  Json out = Json::array();
  for (size_t i = 0; i < rows.size() && i < ctx.top; ++i) out.push_back(ranked_site_json(*rows[i], ctx));
  return Json{{"rows", std::move(out)}, {"omitted", rows.size() > ctx.top ? rows.size() - ctx.top : 0}};
}

// As the text views: at most `top` children a node, `depth` levels; and `budget` nodes in
// all, depth first, the children past it counted in their parent's `omitted`.
Json tree_json(const AllocationTree& n, size_t level, size_t depth, size_t top, size_t& budget) {
  Json kids = Json::array();
  const auto ranked = n.ranked();
  size_t shown = 0;
  if (level < depth)
    for (; shown < ranked.size() && shown < top && budget; ++shown) {
      --budget;
      Json child = tree_json(ranked[shown]->second, level + 1, depth, top, budget);
      child["frame"] = printable(ranked[shown]->first);
      kids.push_back(std::move(child));
    }
  return Json{{"frame", nullptr},
              {"bytes", n.bytes},
              {"allocations", n.allocations},
              {"children", std::move(kids)},
              {"omitted", level < depth ? ranked.size() - shown : 0}};
}

Json tree_json(const AllocationTree& root, size_t depth, size_t top, size_t budget) {
  return tree_json(root, 0, depth, top, budget);
}

}  // namespace

Json allocation_views_json(const AllocationStats& st, const ViewContext& ctx, size_t tree_nodes) {
  Json sizes = Json::array();
  for (const SizeBucket& b : st.sizes)
    sizes.push_back(
        Json{{"log2", b.log2}, {"range", size_range(b.log2)}, {"allocations", b.allocations}, {"bytes", b.bytes}});
  return Json{{"allocations", st.allocations},
              {"bytes", st.bytes},
              {"temporary", st.temporary},
              {"top_allocations", ranking_json(ranked_by_allocations(st), ctx)},
              {"temporary_sites", ranking_json(ranked_by_temporary(st), ctx)},
              {"sizes", std::move(sizes)},
              {"tree", tree_json(allocation_tree(st, ctx.stacks, true), SIZE_MAX, ctx.top, tree_nodes)},
              {"callers", tree_json(allocation_tree(st, ctx.stacks, false), ctx.frames, ctx.top, tree_nodes)}};
}

}  // namespace cumemtrace
