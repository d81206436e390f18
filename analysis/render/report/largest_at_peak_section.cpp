// The largest single allocations live at each device's peak: said in the text only when a
// device held device memory at its peak; the JSON's key is always there.
#include "render/report/largest_at_peak_section.h"

#include "base/plural.h"
#include "base/units.h"
#include "reports/sections/largest_at_peak.h"

namespace cumemtrace {

using json = nlohmann::ordered_json;

void largest_at_peak_text(std::ostream& out, const Report& rep) {
  const LargestAtPeak* held = rep.section_results.find<LargestAtPeak>();
  if (!held || held->devices.empty()) return;
  out << "\nLargest allocations live at the peak\n";
  for (const auto& [device, d] : held->devices) {
    out << "  " << device_label(device) << ", peak at " << since_text(rep, d.peak_time_ns) << ": "
        << count_of(d.live, "allocation") << " live\n";
    for (size_t i = 0; i < d.largest.size(); ++i) {
      const LargeAllocation& l = d.largest[i];
      out << "    " << i + 1 << ". " << iec_exact(l.size) << " of " << format::kind_name(l.kind) << " memory, made at "
          << since_text(rep, l.time_ns) << " (" << fixed(double(l.age_ns) / 1e6, 3) << " ms before the peak), thread "
          << l.tid << ": " << site_name(l.frames, l.python_frames, l.library, l.caller) << "\n";
    }
    if (d.live > d.largest.size())
      out << "    ... and " << count_of(d.live - d.largest.size(), "more allocation") << "\n";
  }
}

void largest_at_peak_json(json& j, const Report& rep, const JsonContext&) {
  json devices = json::array();
  if (const LargestAtPeak* held = rep.section_results.find<LargestAtPeak>())
    for (const auto& [device, d] : held->devices) {
      json largest = json::array();
      for (const LargeAllocation& l : d.largest)
        largest.push_back({{"size", l.size},
                           {"kind", format::kind_name(l.kind)},
                           {"address", hex(l.address)},
                           {"time_ns", l.time_ns},
                           {"since_start_ns", ns_since_start(rep, l.time_ns)},
                           {"age_ns", l.age_ns},
                           {"tid", l.tid},
                           {"site", site_json(l.frames, l.python_frames, l.caller)},
                           {"library", l.library},
                           {"frames", frames_json(l.frames)},
                           {"python_frames", python_frames_json(l.python_frames)}});
      devices.push_back({{"device", device},
                         {"peak_time_ns", d.peak_time_ns},
                         {"live", d.live},
                         {"allocations", std::move(largest)},
                         {"omitted", d.live - d.largest.size()}});
    }
  j["largest_at_peak"] = std::move(devices);
}

}  // namespace cumemtrace
