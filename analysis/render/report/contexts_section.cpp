// CUDA contexts created: each holds device memory no allocation shows.
#include "render/report/sections.h"

#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"

namespace cumemtrace {

using json = nlohmann::ordered_json;

void contexts_text(std::ostream& out, const Report& rep) {
  out << "\nContexts created (each holds device memory no allocation shows)\n";
  if (rep.contexts.empty()) out << "  none\n";
  for (size_t i = 0; i < rep.contexts.size(); ++i) {
    const ContextRow& c = rep.contexts[i];
    out << "  " << i + 1 << ". " << device_label(c.device) << " at " << since_text(rep, c.time_ns) << ": "
        << (c.bytes ? iec_exact(c.bytes) : std::string("size unknown")) << " via " << printable(c.api) << " (thread "
        << c.tid << "), from " << printable(c.library) << ":\n";
    write_python_frames(out, c.python_frames, "       ", rep.frames);
    write_frames(out, c.frames, "       ");
  }
}

void contexts_json(json& j, const Report& rep, const JsonContext&) {
  json contexts = json::array();
  for (const auto& c : rep.contexts)
    contexts.push_back({{"time_ns", c.time_ns},
                        {"since_start_ns", ns_since_start(rep, c.time_ns)},
                        {"device", c.device},
                        {"bytes", c.bytes},
                        {"api", c.api},
                        {"tid", c.tid},
                        {"library", c.library},
                        {"frames", frames_json(c.frames)},
                        {"python_frames", python_frames_json(c.python_frames)}});
  j["contexts"] = std::move(contexts);
}

}  // namespace cumemtrace
