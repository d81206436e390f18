#include "render/views/views.h"

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
