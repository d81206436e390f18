// Failed frees (docs/cli.md, "Failed frees"): refused, so the memory stayed allocated.
#include "render/report/sections.h"

#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"
#include "read/result_names.h"

namespace cumemtrace {

using json = nlohmann::ordered_json;

void failed_frees_text(std::ostream& out, const Report& rep) {
  if (rep.failed_frees_total) out << "\nFailed frees (refused: the memory stayed allocated)\n";
  for (size_t i = 0; i < rep.failed_frees.size(); ++i) {
    const FailedFreeRow& f = rep.failed_frees[i];
    out << "  " << i + 1 << ". " << printable(f.api) << " of " << hex(f.address);
    if (f.size) out << ", " << iec_exact(f.size) << " of " << format::kind_name(f.kind) << " memory";
    out << ", at " << since_text(rep, f.time_ns) << " (" << free_result_text(f) << ", thread " << f.tid << ")\n";
    if (f.count > 1)
      out << "     refused " << f.count << " times alike, the last at " << since_text(rep, f.last_time_ns) << ", on "
          << count_of(f.threads.size(), "thread") << "\n";
    out << "     from " << printable(f.library) << ":\n";
    write_python_frames(out, f.python_frames, "       ", rep.frames);
    write_frames(out, f.frames, "       ");
  }
  if (rep.failed_frees_omitted)
    out << "  ... and " << rep.failed_frees_omitted << " more kinds of failed free (" << rep.failed_frees_total
        << " in all)\n";
}

void failed_frees_json(json& j, const Report& rep, const JsonContext&) {
  json frees = json::array();
  for (const auto& f : rep.failed_frees)
    frees.push_back({{"count", f.count},
                     {"time_ns", f.time_ns},
                     {"last_time_ns", f.last_time_ns},
                     {"since_start_ns", ns_since_start(rep, f.time_ns)},
                     {"device", f.device},
                     {"address", hex(f.address)},
                     {"size", f.size ? json(f.size) : json(nullptr)},
                     {"kind", f.size ? json(format::kind_name(f.kind)) : json(nullptr)},
                     {"api", f.api},
                     {"result", f.result},
                     {"result_type", f.runtime_layer ? "cudaError_t" : "CUresult"},
                     {"result_name", f.runtime_layer ? cuda_error_name(f.result) : cu_result_name(f.result)},
                     {"tid", f.tid},
                     {"threads", f.threads.size()},
                     {"site", site_json(f.frames, f.python_frames, f.caller)},
                     {"library", f.library},
                     {"frames", frames_json(f.frames)},
                     {"python_frames", python_frames_json(f.python_frames)}});
  j["failed_frees"] = std::move(frees);
  j["failed_frees_total"] = rep.failed_frees_total;
  j["failed_frees_omitted"] = rep.failed_frees_omitted;
}

}  // namespace cumemtrace
