#include "cli/baseline_command.h"

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "cli/command.h"
#include "gate/completeness.h"
#include "base/json_text.h"
#include "base/escape.h"
#include "base/plural.h"
#include "read/event_source.h"
#include "base/output_file.h"
#include "base/size_parse.h"
#include "symbols/symbolize.h"
#include "base/units.h"

namespace cumemtrace {

std::optional<Baseline> baseline_of_traces(const std::vector<std::string>& paths, std::string* error,
                                           Incomplete* incomplete) {
  std::vector<Report> reports;
  for (const auto& p : paths) {
    const TraceFile file(p);  // a large trace in passes, holding no event (event_source.h)
    const Trace& t = file.trace();
    if (!t.header_ok) {
      if (error) *error = p + ": " + (t.error ? t.error->message : "unreadable");
      return std::nullopt;
    }
    std::unordered_map<uint64_t, Symbol> symbols;
    if (t.symbols.empty()) symbols = resolve_symbols(t);
    ReportOptions ro;
    ro.top = SIZE_MAX;
    ro.frames = 1;
    ro.extra_symbols = &symbols;
    reports.push_back(build_report(t, file.events(), ro));
    if (file.changed()) {
      if (error) *error = file.changed_message();
      return std::nullopt;
    }
    if (const auto why = incomplete_reasons(reports.back()); !why.empty()) {
      const std::string note = printable(p) + ": figures are incomplete (" + join_reasons(why) + ")";
      if (incomplete) incomplete->found = true;
      if (!incomplete || !incomplete->allow) {
        if (error) *error = note + "; no verdict on them (--allow-incomplete gives one on incomplete figures)";
        return std::nullopt;
      }
      incomplete->notes.push_back(note);
    }
  }
  return baseline_of(reports);
}

std::optional<Baseline> load_baseline(const std::string& path, std::string* error, Incomplete* incomplete) {
  // Anything but a baseline's JSON is read as a trace, whose reader says why a file cannot
  // be read (missing, a folder, empty, not a trace).
  std::ifstream in(path, std::ios::binary);
  if (!in || in.peek() != '{') return baseline_of_traces({path}, error, incomplete);
  try {
    const auto j = nlohmann::json::parse(in);
    auto b = baseline_from_json(j, error);
    if (!b && error) *error = path + ": " + *error;
    return b;
  } catch (const std::exception& e) {
    if (error) *error = path + ": not JSON (" + e.what() + ")";
    return std::nullopt;
  }
}

std::optional<Tolerance> parse_tolerance(const std::string& text, std::string* error) {
  Tolerance t;
  if (text.ends_with('%')) {
    char* end = nullptr;
    const double p = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() - 1 || p < 0) {
      if (error) *error = "'" + text + "' is not a percentage";
      return std::nullopt;
    }
    t.percent = p;
    return t;
  }
  const auto b = parse_size(text, error);
  if (!b) return std::nullopt;
  t.bytes = *b;
  return t;
}

TraceCheck check_against(const Baseline& base, const Baseline& now, const Tolerance& tol) {
  TraceCheck tc;
  tc.path = "baseline";
  const auto changes = diff_sites(base, now);
  for (const auto& [device, cur] : now.devices) {
    const int32_t d = device;  // a structured binding cannot be captured before clang 16 (fuzz build)
    const auto it = base.devices.find(d);
    const Baseline::Device old = it == base.devices.end() ? Baseline::Device{} : it->second;
    auto one = [&](const char* what, uint64_t before, uint64_t after) {
      LimitResult r;
      r.name = std::string("baseline-") + what + " d" + std::to_string(d);
      const uint64_t allowed = before + tol.of(before);
      r.ok = after <= allowed;
      r.message = std::string(what) + " on device " + std::to_string(d) + ": " + iec_exact(after) + ", baseline " +
                  iec_exact(before) + ", allowed up to " + iec_exact(allowed);
      if (!r.ok) {
        std::string grew;
        for (const auto& c : changes)
          if (c.device == d && (c.kind == SiteChange::Kind::kNew || c.kind == SiteChange::Kind::kGrew) &&
              grew.size() < 600)
            grew += (grew.empty() ? "; call sites that grew: " : ", ") + c.key + " (" +
                    std::string(change_name(c.kind)) + ", +" + iec(uint64_t(c.change())) + ")";
        r.message += grew;
      }
      tc.results.push_back(std::move(r));
    };
    one("peak", old.peak, cur.peak);
    one("leaked", old.leaked, cur.leaked);
  }
  return tc;
}

namespace {

int run_baseline(const std::vector<std::string>& traces, const std::string& out, bool allow_incomplete) {
  std::string error;
  Incomplete incomplete;
  incomplete.allow = allow_incomplete;
  const auto b = baseline_of_traces(traces, &error, &incomplete);
  if (!b) {
    std::cerr << "cumemtrace baseline: " << error << "\n";
    return incomplete.found ? kExitIncomplete : 2;
  }
  for (const auto& note : incomplete.notes)
    std::cerr << "cumemtrace baseline: " << note << "; the baseline is of incomplete figures\n";
  OutputFile f(out, traces);
  f.stream() << json_text(to_json(*b), 2) << "\n";
  if (!f.commit()) {
    std::cerr << "cumemtrace baseline: " << f.error() << "\n";
    return f.exit_status();
  }
  std::cerr << "cumemtrace baseline: " << count_of(b->devices.size(), "device") << ", "
            << count_of(b->sites.size(), "call site") << " written to " << out << "\n";
  return 0;
}

}  // namespace

Command register_baseline(CLI::App& app) {
  struct Options {
    std::vector<std::string> traces;
    std::string output;
  };
  const auto o = std::make_shared<Options>();
  Command c;
  c.sub = app.add_subcommand("baseline", "Write a JSON baseline of traces for check --baseline and diff");
  add_traces(c.sub, o->traces);
  c.sub->add_option("-o,--output", o->output, "Baseline file to write")->required();
  add_shared_options(c.sub, kCallSiteOptions | kAllowIncomplete | kForceOutput);
  c.run = [o] {
    return expand_inputs(o->traces, "baseline") ? run_baseline(o->traces, o->output, allow_incomplete()) : 2;
  };
  return c;
}

}  // namespace cumemtrace
