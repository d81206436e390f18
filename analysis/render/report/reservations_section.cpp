// VMM address-space reservations: address space only, not device memory.
#include "render/report/sections.h"

#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"

namespace cumemtrace {

using json = nlohmann::ordered_json;

void reservations_text(std::ostream& out, const Report& rep) {
  if (!rep.reservations.empty()) {
    out << "\nVMM address space reservations (address space only, not device memory)\n";
    for (const auto& r : rep.reservations) {
      out << "  " << (r.device < 0 ? std::string("no device named") : device_label(r.device)) << ": " << r.reserves
          << " reserved, " << r.frees << " freed; peak " << iec_exact(r.peak_bytes) << "; live at end "
          << iec_exact(r.end_bytes) << " in " << r.end_count << "\n";
      write_sites(out, r.sites, 0, rep.frames);
    }
  }
}

void reservations_json(json& j, const Report& rep, const JsonContext&) {
  json res = json::array();
  for (const auto& r : rep.reservations) {
    res.push_back({{"device", r.device},
                   {"reserves", r.reserves},
                   {"frees", r.frees},
                   {"peak_bytes", r.peak_bytes},
                   {"end_bytes", r.end_bytes},
                   {"end_count", r.end_count},
                   {"call_sites", site_rows_json(r.sites)}});
  }
  j["reservations"] = std::move(res);
}

}  // namespace cumemtrace
