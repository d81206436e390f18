// `cumemtrace report`: docs/cli.md.
#include <iostream>

#include "commands.h"
#include "report.h"
#include "report_json.h"
#include "report_text.h"
#include "symbolize.h"
#include "trace_check.h"

namespace cumemtrace {

int cmd_report(const std::vector<std::string>& paths, bool json, size_t top, size_t frames) {
  int rc = 0;
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  bool first = true;
  for (const auto& path : paths) {
    Trace t = read_trace(path);
    if (!check_trace(t)) {
      rc = 1;
      continue;
    }
    // A trace never symbolized (the job was not started by `cumemtrace run`) can still
    // be symbolized here when the module files exist on this machine.
    std::unordered_map<uint64_t, Symbol> extra;
    if (t.symbols.empty()) extra = resolve_symbols(t);
    ReportOptions opt;
    opt.top = top;
    opt.frames = frames;
    opt.extra_symbols = &extra;
    Report rep = build_report(t, opt);
    if (json) {
      all.push_back(to_json(rep));
    } else {
      if (!first) std::cout << "\n" << std::string(78, '=') << "\n\n";
      write_text(std::cout, rep);
    }
    first = false;
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
