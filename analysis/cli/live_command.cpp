// `cumemtrace live`: docs/cli.md.
#include <sys/stat.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "replay/checkpoint.h"
#include "reports/live_index.h"
#include "cli/command.h"
#include "base/json_text.h"
#include "read/event_source.h"
#include "replay/live_time.h"
#include "base/progress.h"
#include "reports/report.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "read/damage/trace_check.h"
#include "base/units.h"

namespace cumemtrace {
namespace {

// A moment outside the trace is answered all the same (nothing yet, or what was live at
// its end), but never without a word: `--at 123456789000` is easily a moment of another
// process's clock.
void warn_outside(const std::string& part, uint64_t at, const Trace& t, const KnownMoments* known) {
  const uint64_t start = t.process ? t.process->start_monotonic_ns : 0;
  const uint64_t end = known ? known->end_ns : last_moment(t);
  if (start && at < start)
    std::cerr << "cumemtrace live: warning: --at " << printable(part) << " is before the trace started ("
              << seconds(start - at) << " before it): nothing was live yet\n";
  else if (end && at > end)
    std::cerr << "cumemtrace live: warning: --at " << printable(part) << " is after the trace's last moment ("
              << seconds(end - start) << " after its start): what was live at its end\n";
}

// Each part as a moment (live_time.h), or nullopt after saying why on stderr.
std::optional<std::vector<uint64_t>> moments(const std::vector<std::string>& parts, const Trace& t,
                                             const KnownMoments* known) {
  std::vector<uint64_t> ats;
  std::map<std::string, uint64_t> parsed;  // "peak" replays the whole trace: once is enough
  for (const auto& part : parts) {
    if (auto seen = parsed.find(part); seen != parsed.end()) {
      ats.push_back(seen->second);
      continue;
    }
    std::string error;
    auto at = parse_moment(part, t, error, known);
    if (!at) {
      std::cerr << "cumemtrace live: " << error << "\n";
      return std::nullopt;
    }
    warn_outside(part, *at, t, known);
    ats.push_back(*at);
    parsed.emplace(part, *at);
  }
  return ats;
}

void print(const std::vector<LiveReport>& lives, uint64_t start, bool json) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const LiveReport& lr : lives) {
    if (json) out.push_back(to_json(lr));
    else write_live_text(std::cout, lr, start);
  }
  if (json) std::cout << json_text(out, 2) << "\n";
}

int cmd_live(const std::string& path, const std::vector<std::string>& at_args, bool json) {
  std::vector<std::string> parts;
  for (const auto& a : at_args) {
    if (a.empty()) parts.push_back(a);  // an error, said below
    std::stringstream ss(a);
    for (std::string part; std::getline(ss, part, ',');) parts.push_back(part);
    if (!a.empty() && a.back() == ',') parts.emplace_back();
  }
  std::optional<ProgressScope> progress(std::in_place, "cumemtrace live");
  // TRACE.idx, when `cumemtrace index` made one for this very file (checkpoint.h).
  const std::string index_path = path + ".idx";
  if (struct stat st; ::stat(index_path.c_str(), &st) == 0) {
    // A trace that cannot be mapped: the whole read below says why, once.
    if (const MappedFile file(path); file.error().empty()) {
      TraceIndex index;
      std::string why = load_index(index_path, file.bytes(), index);
      if (why.empty()) {
        Trace meta = index.meta;
        meta.path = path;
        const KnownMoments known{index.end_ns, index.peak_ns};
        const auto ats = moments(parts, meta, &known);
        if (!ats) return 2;
        if (auto lives = build_live_indexed(path, file.bytes(), index, meta, *ats, why)) {
          progress.reset();  // the bar's line ends before the output
          print(*lives, meta.process ? meta.process->start_monotonic_ns : 0, json);
          return 0;
        }
      }
      progress->clear();
      std::cerr << "cumemtrace live: not using " << printable(index_path) << ": " << why
                << "; reading the whole trace\n";
    }
  }
  const TraceFile file(path);
  const Trace& t = file.trace();
  progress->clear();
  if (!check_trace(t)) return 1;
  std::vector<LiveReport> lives;
  if (file.holds_events()) {
    const auto ats = moments(parts, t, nullptr);
    if (!ats) return 2;
    lives = build_live(t, *ats);
  } else {
    // A large trace read in passes (event_source.h): "end", "peak" and the events' order
    // from one, the moments from another.
    const bool peak = std::any_of(parts.begin(), parts.end(),
                                  [](const std::string& p) { return p.find("peak") != std::string::npos; });
    const EventFacts facts = event_facts(t, file.events(), peak);
    const auto ats = moments(parts, t, &facts.known);
    if (!ats) return 2;
    lives = build_live(t, file.events(), *ats, facts.in_time_order);
  }
  if (file.changed()) {
    progress.reset();
    std::cerr << "cumemtrace live: " << file.changed_message() << "\n";
    return 1;
  }
  progress.reset();  // the bar's line ends before the output
  print(lives, t.process ? t.process->start_monotonic_ns : 0, json);
  return 0;
}

}  // namespace

Command register_live(CLI::App& app) {
  struct Options {
    std::string trace;
    std::vector<std::string> at;
    bool json = false;
  };
  const auto o = std::make_shared<Options>();
  Command c;
  c.sub = app.add_subcommand("live", "What was live at given moments of a written trace (not memray's live mode)");
  c.sub->add_option("trace", o->trace, "Trace file")->required();
  c.sub
      ->add_option("--at", o->at,
                   "CLOCK_MONOTONIC ns, seconds since start ('12.5 s'), 'peak' or 'end'; repeat or give a comma list")
      ->required()
      ->take_all();
  c.sub->add_flag("--json", o->json, "JSON output: an array, one object per --at");
  c.run = [o] { return cmd_live(o->trace, o->at, o->json); };
  return c;
}

}  // namespace cumemtrace
