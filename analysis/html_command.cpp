// `cumemtrace html`: docs/cli.md; the page is described in docs/html-report.md.
#include "html_command.h"

#include <iostream>

#include "event_source.h"
#include "html_data.h"
#include "html_page.h"
#include "output_file.h"
#include "report.h"
#include "report_json.h"
#include "symbolize.h"
#include "trace_check.h"

namespace cumemtrace {

int cmd_html(const HtmlOptions& opt) {
  if (names_an_input(opt.output, opt.traces)) {
    std::cerr << "cumemtrace html: " << opt.output << " is one of the input traces\n";
    return 2;
  }
  if (!html_assets_built()) {
    std::cerr << "cumemtrace html: this cumemtrace was built without its page's libraries; "
                 "run scripts/html_assets.sh and rebuild\n";
    return 1;
  }
  int rc = 0;
  nlohmann::ordered_json processes = nlohmann::ordered_json::array();
  for (const auto& path : opt.traces) {
    // A large trace is read in passes, as `report` reads it (event_source.h).
    const TraceFile file(path);
    const Trace& t = file.trace();
    if (!check_trace(t)) {
      rc = 1;
      continue;
    }
    std::unordered_map<uint64_t, Symbol> extra;
    if (t.symbols.empty()) extra = resolve_symbols(t);
    ReportOptions ropt;
    ropt.top = opt.top;
    ropt.frames = opt.frames;
    ropt.extra_symbols = &extra;
    const Report rep = build_report(t, file.events(), ropt);
    Stacks stacks(t);
    stacks.set_symbols(&extra);
    // The report's own JSON (the tables' figures equal `report --json`'s), beside what
    // only the page needs.
    nlohmann::ordered_json view = html_data(t, file.events(), rep, stacks);
    if (file.changed()) {
      std::cerr << "cumemtrace html: " << file.changed_message() << "\n";
      rc = 1;
      continue;
    }
    processes.push_back(nlohmann::ordered_json{{"report", to_json(rep)}, {"view", std::move(view)}});
  }
  if (processes.empty()) return rc ? rc : 1;
  OutputFile out(opt.output, opt.traces);
  if (out.ok()) {
    write_html_page(out.stream(), nlohmann::ordered_json{{"format", 1}, {"processes", processes}}, "cumemtrace report");
    out.commit();
  }
  if (!out.ok()) {
    std::cerr << "cumemtrace html: " << out.error() << "\n";
    return out.exit_status();
  }
  return rc;
}

}  // namespace cumemtrace
