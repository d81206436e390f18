#include "render/page/site_bands.h"

#include "base/escape.h"

namespace cumemtrace {

namespace {

std::string band_frame_text(const Frame& f) { return printable(describe(f, FrameStyle::kPage)); }

// The user's Python line (call_site_rule.h) when the site has one, with the caller that
// tells it from other sites of that line; else "FUNCTION
// (FILE:LINE) <- FUNCTION (FILE:LINE)", the native frames from the call site; the library
// when neither is named. Named by the user's frame and the one calling it: sites that
// reach the allocator through one helper differ only in who called the helper.
std::string short_label(const SiteRow& r) {
  if (!r.python_frames.empty()) {
    const std::string user = user_frame_text(r.frames, r.python_frames, r.caller.text);
    if (!user.empty()) return printable(user);
  }
  const std::vector<Frame>& fs = r.frames;
  std::string label;
  for (size_t i = 0; i < fs.size() && i < 2; ++i) {
    const Frame& f = fs[i];
    if (f.function.empty() && f.file.empty()) break;
    if (i) label += " <- ";
    label += printable(describe(f, FrameStyle::kLabel));
  }
  return label.empty() ? printable(r.library) : label;
}

}  // namespace

nlohmann::ordered_json band_sites_json(const SiteBands& bands, int32_t device) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const SiteRow* r : bands.rows(device)) {
    std::vector<std::string> frames;
    for (const Frame& f : r->python_frames) frames.push_back(band_frame_text(f));
    for (const Frame& f : r->frames) frames.push_back(band_frame_text(f));
    out.push_back({{"label", short_label(*r)}, {"library", printable(r->library)}, {"frames", frames}});
  }
  return out;
}

}  // namespace cumemtrace
