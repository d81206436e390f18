#include "render/report_json.h"

#include "base/json_text.h"
#include "base/units.h"
#include "render/report/sections.h"
#include "render/report_parts.h"
#include "stacks/call_site_rule.h"

namespace cumemtrace {
namespace {

using json = nlohmann::ordered_json;
using format::Kind;

json frag(const FragmentationFigures& f) {
  return {{"live_bytes", f.live_bytes},   {"live_count", f.live_count},
          {"arena_bytes", f.arena_bytes}, {"arena_count", f.arena_count},
          {"gap_bytes", f.gap_bytes},     {"largest_gap", f.largest_gap},
          {"gap_ratio", f.gap_ratio()},   {"external_fragmentation", f.external_fragmentation()}};
}

// `startup`: one of libc's start-up frames (call_site_rule.h), which the text views leave out
// and the page folds; the JSON keeps them, marked, so that each reader need not know the rule.
json native_frame(const Frame& f, bool startup) {
  return {{"ip", hex(f.ip)},
          {"module", f.module.empty() ? json(nullptr) : json(f.module)},
          {"offset", f.module.empty() ? json(nullptr) : json(hex(f.offset))},
          {"function", f.function.empty() ? json(nullptr) : json(f.function)},
          {"file", f.file.empty() ? json(nullptr) : json(f.file)},
          {"line", f.line ? json(f.line) : json(nullptr)},
          {"startup", startup}};
}

json python_frame(const Frame& f) {
  return {{"file", f.file}, {"function", f.function}, {"line", f.line ? json(f.line) : json(nullptr)}};
}

json frames(const std::vector<Frame>& fs) {
  json a = json::array();
  const size_t first_startup = fs.size() - libc_startup_frames(fs);
  for (size_t i = 0; i < fs.size(); ++i) a.push_back(native_frame(fs[i], i >= first_startup));
  return a;
}

// Python frames (trace 1.6), innermost first: where in the program's own code.
json python_frames(const std::vector<Frame>& fs) {
  json a = json::array();
  for (const auto& f : fs) a.push_back(python_frame(f));
  return a;
}

}  // namespace

json unknown_null(uint64_t v) { return v == format::kUnknown64 ? json(nullptr) : json(v); }

uint64_t ns_since_start(const Report& rep, uint64_t t) { return t > rep.start_ns ? t - rep.start_ns : 0; }

json by_kind_json(const uint64_t (&v)[format::kKindCount], bool skip_zero) {
  json o = json::object();
  for (int k = 0; k < format::kKindCount; ++k)
    if (v[k] || !skip_zero) o[std::string(format::kind_name(Kind(k)))] = v[k];
  return o;
}

// Native and Python frames in one stack (python_stacks.h, merge_stacks).
json merged_frames_json(const std::vector<Frame>& fs) {
  json a = json::array();
  const size_t first_startup = fs.size() - libc_startup_frames(fs);
  for (size_t i = 0; i < fs.size(); ++i) {
    const Frame& f = fs[i];
    json o = f.python ? python_frame(f) : native_frame(f, i >= first_startup);
    o["python"] = f.python;
    a.push_back(std::move(o));
  }
  return a;
}

json site_rows_json(const std::vector<SiteRow>& rows) {
  json a = json::array();
  for (const auto& r : rows) {
    a.push_back({{"call_site_id", r.node},
                 {"site", site_json(r.frames, r.python_frames, r.caller)},
                 {"library", r.library},
                 {"device", r.device},
                 {"kind", format::kind_name(r.kind)},
                 {"bytes", r.bytes},
                 {"count", r.count},
                 {"threads", r.threads},
                 {"frames", frames(r.frames)},
                 {"python_frames", python_frames(r.python_frames)},
                 {"merged_frames", merged_frames_json(r.merged_frames)}});
  }
  return a;
}

json libraries_json(const std::vector<LibraryRow>& rows) {
  json a = json::array();
  for (const auto& l : rows)
    a.push_back({{"library", l.library},
                 {"bytes", l.bytes},
                 {"count", l.count},
                 {"bytes_by_kind", by_kind_json(l.bytes_by_kind)}});
  return a;
}

json site_json(const std::vector<Frame>& native, const std::vector<Frame>& python, const CallerNames::Names& caller) {
  const std::string text = user_frame_text(native, python, caller.text);
  return text.empty() ? json(nullptr) : json(text);
}

json frames_json(const std::vector<Frame>& fs) { return frames(fs); }
json python_frames_json(const std::vector<Frame>& fs) { return python_frames(fs); }
json fragmentation_json(const FragmentationFigures& f) { return frag(f); }

json BoundaryListing::listed(const std::vector<uint64_t>& at) const {
  if (omitted() == 0 || at.size() != total) return at;
  json out = json::array();
  for (size_t k = 0; k < kHead; ++k) out.push_back(at[k]);
  for (size_t k = total - kTail; k < total; ++k) out.push_back(at[k]);
  return out;
}

json to_json(const Report& rep, const JsonOptions& opt) { return json_escaped(report_json(rep, opt)); }
json to_json(const LiveReport& live) { return json_escaped(live_json(live)); }

json report_json(const Report& rep, const JsonOptions& opt) {
  const JsonContext ctx{BoundaryListing{rep.growth.boundaries_ns.size(), opt.all_boundaries}};
  json j;
  for (const ReportSection& s : report_sections())
    if (s.json) s.json(j, rep, ctx);
  return j;
}

json live_json(const LiveReport& live) {
  json devices = json::array();
  for (const auto& d : live.devices) {
    devices.push_back({{"device", d.device},
                       {"device_bytes", d.device_bytes},
                       {"count", d.count},
                       {"live_bytes", by_kind_json(d.live_bytes, false)},
                       {"live_count", by_kind_json(d.live_count, false)},
                       {"reserved_bytes", d.reserved_bytes},
                       {"fragmentation", frag(d.frag)},
                       {"bytes_by_library", libraries_json(d.by_library)}});
  }
  return {{"trace", live.path}, {"at_ns", live.at_ns}, {"events_applied", live.events_applied}, {"devices", devices}};
}

}  // namespace cumemtrace