// The text views of `report --view` (views.def lists them; docs/cli.md, "Views"): each
// shows one question about a trace's allocations in place of the whole report.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "reports/views/allocation_stats.h"
#include "stacks/stacks.h"

namespace cumemtrace {

// What a view draws from besides the figures: the stacks to name sites by, and the
// command line's --top and --frames.
struct ViewContext {
  const Stacks& stacks;
  size_t top = 10;
  size_t frames = 6;
};

using ViewWriter = void (*)(std::ostream&, const AllocationStats&, const ViewContext&);

struct View {
  std::string_view name;
  std::string_view summary;
  ViewWriter write;
};

#define VIEW(id, name, summary) void write_##id##_view(std::ostream&, const AllocationStats&, const ViewContext&);
#include "render/views/views.def"
#undef VIEW

// Every view, in views.def's order.
const std::vector<View>& all_views();
// The view called `name`, or nullptr.
const View* find_view(std::string_view name);

// A size bucket's range (allocation_stats.h SizeBucket), its bounds exactly in their unit:
// "512 B to 1 KiB", from the first up to (not including) the second.
std::string size_range(unsigned log2);

// The site in one line, as the report's tables name it (report_parts.h site_name).
std::string view_site_name(const SiteAllocations& s, const ViewContext& ctx);
// The site's stack, as the report's tables show them: its innermost Python
// frames when it has any, then its native frames from the call site, at most ctx.frames.
void write_site_stack(std::ostream& out, const SiteAllocations& s, const ViewContext& ctx, const char* indent);

}  // namespace cumemtrace
