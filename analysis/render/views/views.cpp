#include "render/views/views.h"

#include <algorithm>

#include "render/report_parts.h"
#include "stacks/python_stacks.h"

namespace cumemtrace {

const std::vector<View>& all_views() {
  static const std::vector<View> views = {
#define VIEW(id, name, summary) {name, summary, write_##id##_view},
#include "render/views/views.def"
#undef VIEW
  };
  return views;
}

const View* find_view(std::string_view name) {
  for (const View& v : all_views())
    if (v.name == name) return &v;
  return nullptr;
}

namespace {

// 2^k in its unit, exactly: "512 B", "1 KiB", "64 MiB".
std::string power_of_two(unsigned k) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  return std::to_string(uint64_t(1) << (k % 10)) + " " + units[std::min(k / 10, 6u)];
}

}  // namespace

std::string size_range(unsigned log2) {
  return power_of_two(log2) + " to " + (log2 < 63 ? power_of_two(log2 + 1) : "16 EiB");
}

std::string view_site_name(const SiteAllocations& s, const ViewContext& ctx) {
  const std::vector<Frame> native = s.node ? ctx.stacks.frames(s.node, ctx.frames) : std::vector<Frame>{};
  const std::vector<Frame> python =
      s.python_stack ? python_frames(ctx.stacks.trace(), s.python_stack) : std::vector<Frame>{};
  return site_name(native, python, s.library, {});
}

void write_site_stack(std::ostream& out, const SiteAllocations& s, const ViewContext& ctx, const char* indent) {
  if (s.python_stack) write_python_frames(out, python_frames(ctx.stacks.trace(), s.python_stack), indent, ctx.frames);
  write_frames(out, s.node ? ctx.stacks.frames(s.node, ctx.frames) : std::vector<Frame>{}, indent);
}

}  // namespace cumemtrace
