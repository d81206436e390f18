// What was live at the end: held by design (caching allocators' caches, libraries'
// handles), possible leaks, exports still open elsewhere; and how the process ended.
#include "render/report/sections.h"

#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"

namespace cumemtrace {

using json = nlohmann::ordered_json;

void held_by_cache_text(std::ostream& out, const Report& rep) {
  if (!rep.held_by_cache.empty()) {
    out << "\nHeld at exit by design (caching allocators' caches, libraries' handles: kept until the process "
           "ends, not leaks)\n";
    for (const auto& g : rep.held_by_cache) {
      out << "  held by " << printable(g.allocator) << (g.library_handles ? "'s handles" : "'s cache")
          << " at exit: " << iec_exact(g.bytes) << " in " << count_of(g.count, "allocation") << "\n";
      write_sites(out, g.sites, g.sites_omitted, rep.frames);
    }
  }
}

void leaks_text(std::ostream& out, const Report& rep) {
  out << "\nPossible leaks (live at end of trace, unless the process was killed; caches and libraries' handles apart, "
         "except at call sites that leak each iteration)\n";
  if (rep.leaks.empty()) out << "  nothing\n";
  for (const auto& g : rep.leaks) {
    out << "  " << format::kind_name(g.kind) << ": " << iec_exact(g.bytes) << " in " << count_of(g.count, "allocation")
        << "\n";
    write_sites(out, g.sites, g.sites_omitted, rep.frames);
  }
}

void leaks_json(json& j, const Report& rep, const JsonContext&) {
  json leaks = json::array();
  for (const auto& g : rep.leaks) {
    leaks.push_back({{"kind", format::kind_name(g.kind)},
                     {"bytes", g.bytes},
                     {"count", g.count},
                     {"call_sites", site_rows_json(g.sites)},
                     {"call_sites_omitted", g.sites_omitted}});
  }
  j["leaks"] = std::move(leaks);
}

void held_by_cache_json(json& j, const Report& rep, const JsonContext&) {
  json held = json::array();
  for (const auto& g : rep.held_by_cache)
    held.push_back({{"allocator", g.allocator},
                    {"holder", g.library_handles ? "library-handles" : "cache"},
                    {"bytes", g.bytes},
                    {"count", g.count},
                    {"call_sites", site_rows_json(g.sites)},
                    {"call_sites_omitted", g.sites_omitted}});
  j["held_by_cache_at_exit"] = std::move(held);
}

void exported_still_open_json(json& j, const Report& rep, const JsonContext&) {
  json still_open = json::array();
  for (const IpcExport& x : rep.ipc.exports)
    if (x.still_open_in)
      still_open.push_back({{"pid", x.still_open_in}, {"device", x.device}, {"address", x.address}, {"bytes", x.size}});
  j["exported_still_open"] = std::move(still_open);
}

void exit_json(json& j, const Report& rep, const JsonContext&) {
  j["exit_status"] = rep.exit_status >= 0 ? json(rep.exit_status) : json(nullptr);
  if (const auto& l = rep.framework_limit)
    j["framework_limit"] = {{"framework", l->framework},     {"device", l->device},
                            {"peak_bytes", l->peak_bytes},   {"limit_bytes", l->limit_bytes},
                            {"total_bytes", l->total_bytes}, {"fraction", l->fraction},
                            {"setting", l->setting},         {"preallocated", l->preallocated},
                            {"trace_ended", l->trace_ended}, {"message", l->message}};
  else j["framework_limit"] = nullptr;
}

}  // namespace cumemtrace
