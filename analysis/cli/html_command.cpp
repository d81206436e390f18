// `cumemtrace html`: docs/cli.md; the page is described in docs/html-report.md.
#include "cli/command.h"

#include <iostream>
#include <sstream>

#include "read/event_source.h"
#include "render/page/html_data.h"
#include "render/job_view.h"
#include "render/page/page_tables.h"
#include "reports/job/job.h"
#include "html_page.h"
#include "base/json_object.h"
#include "base/json_text.h"
#include "base/escape.h"
#include "base/output_file.h"
#include "base/plural.h"
#include "reports/report.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "symbols/symbolize.h"
#include "read/damage/trace_check.h"

namespace cumemtrace {
namespace {

struct HtmlOptions {
  std::vector<std::string> traces;
  std::string output;          // the page to write
  size_t top = 10;             // call-site rows per table, as `report --top`
  size_t frames = 6;           // frames per call site in the tables, as `report --frames`
  double rank_tolerance = 10;  // several traces: as `report --rank-tolerance`
};

// 0 when every trace was read; 1 when one could not be (the page still holds the rest).
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
  // Several traces are one job (reports/job/job.h): its table, GPUs and findings head the page.
  std::vector<Report> reports;
  std::vector<std::vector<DeviceInfo>> devices;
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
    ropt.by_range = true;     // the page's "Memory per range" table
    ropt.by_function = true;  // ... and "Memory per function"
    ropt.extra_symbols = &extra;
    Report rep = build_report(t, file.events(), ropt);
    Stacks stacks(t);
    stacks.set_symbols(&extra);
    // The report's own JSON (the tables' figures equal `report --json`'s), beside what
    // only the page needs.
    HtmlDataOptions hopt;
    hopt.top = opt.top;  // the allocation views keep as many rows as the tables
    hopt.frames = opt.frames;
    nlohmann::ordered_json view = html_data(t, rep, stacks, page_model(t, file.events(), rep, stacks, hopt), hopt);
    if (file.changed()) {
      std::cerr << "cumemtrace html: " << file.changed_message() << "\n";
      rc = 1;
      continue;
    }
    // The page opens with the report's Summary, its very lines (report_text.h).
    std::ostringstream summary_text;
    summary(summary_text, rep);
    std::istringstream summary_in(summary_text.str());
    view["summary"] = nlohmann::ordered_json::array();
    for (std::string line; std::getline(summary_in, line);)
      if (line.starts_with("  ")) view["summary"].push_back(line.substr(2));  // not the heading before them
    nlohmann::ordered_json report = to_json(rep);
    bound_page_tables(report);  // a page of a few hundred rows per table, however long the trace's
    nlohmann::ordered_json process = reserved_object<nlohmann::ordered_json>(2);  // json_object.h: no copy
    process["report"] = std::move(report);
    process["view"] = std::move(view);
    processes.push_back(std::move(process));
    if (opt.traces.size() > 1) reports.push_back(std::move(rep)), devices.push_back(t.devices);
  }
  if (processes.empty()) return rc ? rc : 1;
  const size_t written = processes.size();
  // `frames`: --frames, which the tables' stacks keep to (Python frames too) on the page;
  // the processes moved in, not copied (their moments' address maps are most of the page).
  nlohmann::ordered_json page{{"format", 1}, {"frames", opt.frames}, {"processes", std::move(processes)}};
  // The job's strings (host names) by the JSON rule, as the report's (docs/cli.md).
  if (reports.size() > 1) page["job"] = json_escaped(job_to_json(build_job(reports, devices, opt.rank_tolerance)));
  OutputFile out(opt.output, opt.traces);
  if (out.ok()) {
    write_html_page(out.stream(), page, "cumemtrace report");
    out.commit();
  }
  if (!out.ok()) {
    std::cerr << "cumemtrace html: " << out.error() << "\n";
    return out.exit_status();
  }
  // As `baseline` and `export -o DIR` do: the one line that says where the result went.
  std::cerr << "cumemtrace html: " << count_of(written, "process") << " written to " << printable(opt.output) << "\n";
  return rc;
}

}  // namespace

Command register_html(CLI::App& app) {
  struct Options {
    HtmlOptions html;
    long long top = 10, frames = 6;
  };
  const auto o = std::make_shared<Options>();
  Command c;
  c.sub = app.add_subcommand("html", "Write one self-contained HTML page of traces (docs/html-report.md)");
  add_traces(c.sub, o->html.traces,
             "Trace files, folders of traces, or a `run` manifest (several: one job, a process selector)");
  c.sub->add_option("-o,--output", o->html.output, "Page to write")->required();
  c.sub->add_option("--top", o->top, "Call sites per table")->capture_default_str()->check(kCount);
  c.sub->add_option("--frames", o->frames, "Frames per call site in the tables")->capture_default_str()->check(kCount);
  c.sub
      ->add_option("--rank-tolerance", o->html.rank_tolerance,
                   "Several traces: a rank whose peak differs from the median by more than PCT is a finding")
      ->capture_default_str()
      ->check(kPercent);
  add_shared_options(c.sub, kCallSiteOptions | kForceOutput);
  c.run = [o] {
    if (!expand_inputs(o->html.traces, "html")) return 1;
    o->html.top = size_t(o->top);
    o->html.frames = size_t(o->frames);
    return cmd_html(o->html);
  };
  return c;
}

}  // namespace cumemtrace
