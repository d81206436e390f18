// `cumemtrace report`: docs/cli.md.
#include <iostream>
#include <optional>
#include <sstream>

#include "commands.h"
#include "parallel.h"
#include "progress.h"
#include "report.h"
#include "report_json.h"
#include "report_text.h"
#include "symbolize.h"
#include "trace_check.h"

namespace cumemtrace {

namespace {

// One trace's share of the command: what it says on stderr, then its report.
struct TraceReport {
  std::string errors;
  std::optional<Report> report;
};

TraceReport report_one(const std::string& path, size_t top, size_t frames) {
  TraceReport out;
  Trace t = read_trace(path);
  std::ostringstream errors;
  const bool readable = check_trace(t, errors);
  out.errors = errors.str();
  if (!readable) return out;
  // A trace never symbolized (the job was not started by `cumemtrace run`) can still
  // be symbolized here when the module files exist on this machine.
  std::unordered_map<uint64_t, Symbol> extra;
  if (t.symbols.empty()) extra = resolve_symbols(t);
  ReportOptions opt;
  opt.top = top;
  opt.frames = frames;
  opt.extra_symbols = &extra;
  out.report = build_report(t, opt);
  return out;
}

}  // namespace

int cmd_report(const std::vector<std::string>& paths, bool json, size_t top, size_t frames) {
  int rc = 0;
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  bool first = true;
  // One trace: progress on stderr when it takes long; several: read and analysed in
  // parallel, silently, then printed in the order given.
  std::optional<ProgressScope> progress;
  if (paths.size() == 1) progress.emplace("cumemtrace report");
  auto reports = parallel_map(paths.size(), [&](size_t i) { return report_one(paths[i], top, frames); });
  for (auto& [errors, rep] : reports) {
    progress.reset();  // the bar's line ends before anything else is said
    std::cerr << errors;
    if (!rep) {
      rc = 1;
      continue;
    }
    if (json) {
      all.push_back(to_json(*rep));
    } else {
      if (!first) std::cout << "\n" << std::string(78, '=') << "\n\n";
      write_text(std::cout, *rep);
    }
    first = false;
    rep.reset();  // printed: its memory can go
  }
  if (json) {
    // One trace: one object; several: an array, one object each (docs/report-json.md).
    if (paths.size() > 1)
      std::cout << all.dump(2) << "\n";
    else if (!all.empty())
      std::cout << all[0].dump(2) << "\n";
  }
  return rc;
}

}  // namespace cumemtrace
