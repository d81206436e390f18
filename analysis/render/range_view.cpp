#include "render/range_view.h"
#include "render/report/sections.h"

#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"
#include "render/report_parts.h"

namespace cumemtrace {

void write_not_whole(std::ostream& out, const Integrity& in, std::string_view part) {
  for (const BoundedLoss* b : in.bounded_for(part)) out << "  NOT WHOLE: " << b->says << " (BOUNDED BY THE TRACER)\n";
}

void write_ranges_text(std::ostream& out, const Report& rep) {
  if (!rep.ranges) return;
  out << "\nMemory per range (NVTX push ranges count their own thread's allocations; NVTX start/end\n"
         "ranges and marks, from one to the next of the name, every thread's)\n";
  write_not_whole(out, rep.integrity, "by_range");
  if (rep.ranges->empty()) {
    out << "  no NVTX range or mark in the trace\n";
    return;
  }
  for (const RangeRow& r : *rep.ranges) {
    out << "  " << printable(r.name) << " (" << r.kind << "): " << count_of(r.calls, "call");
    if (r.open_at_end) out << " (" << r.open_at_end << " open at the end)";
    out << ", " << count_of(r.allocations, "allocation") << " of " << iec_exact(r.bytes_allocated) << "; peak inside "
        << iec_exact(r.peak_bytes);
    if (r.peak_device >= 0) out << " on device " << r.peak_device;
    out << "; held after " << iec_exact(r.held_after_bytes) << "\n";
  }
}

nlohmann::ordered_json ranges_json(const Report& rep) {
  if (!rep.ranges) return nullptr;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const RangeRow& r : *rep.ranges)
    rows.push_back({{"name", r.name},
                    {"kind", r.kind},
                    {"calls", r.calls},
                    {"open_at_end", r.open_at_end},
                    {"time_ns", r.time_ns},
                    {"allocations", r.allocations},
                    {"bytes_allocated", r.bytes_allocated},
                    {"peak_bytes", r.peak_bytes},
                    {"peak_device", r.peak_device},
                    {"held_after_bytes", r.held_after_bytes}});
  return rows;
}

void write_functions_text(std::ostream& out, const Report& rep) {
  if (!rep.functions) return;
  out << "\nMemory per function (the program's own functions, by the call-site rule; allocations made\n"
         "with the function on the stack, inclusive; calls are not seen)\n";
  if (rep.functions->empty()) {
    out << "  no allocation had a function of the program's on its stack\n";
    return;
  }
  for (const FunctionRow& f : *rep.functions)
    out << "  " << printable(f.name) << ": " << count_of(f.allocations, "allocation") << " of "
        << iec_exact(f.bytes_allocated) << "; at most " << iec_exact(f.peak_bytes) << " held at once; held after "
        << iec_exact(f.held_after_bytes) << "\n";
}

nlohmann::ordered_json functions_json(const Report& rep) {
  if (!rep.functions) return nullptr;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const FunctionRow& f : *rep.functions)
    rows.push_back({{"function", f.name},
                    {"python", f.python},
                    {"allocations", f.allocations},
                    {"bytes_allocated", f.bytes_allocated},
                    {"peak_bytes", f.peak_bytes},
                    {"held_after_bytes", f.held_after_bytes}});
  return rows;
}

void ranges_section_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext&) {
  if (!rep.ranges) return;
  j["by_range"] = ranges_json(rep);
  j["by_range_complete"] = rep.integrity.bounded_for("by_range").empty();
}

void functions_section_json(nlohmann::ordered_json& j, const Report& rep, const JsonContext&) {
  if (rep.functions) j["by_function"] = functions_json(rep);
}

}  // namespace cumemtrace
