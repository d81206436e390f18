// `cumemtrace report`: docs/cli.md.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/command.h"
#include "cli/nearest_name.h"
#include "reports/job/job.h"
#include "render/job_view.h"
#include "base/parallel.h"
#include "base/progress.h"
#include "reports/report.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "render/views/views.h"
#include "reports/views/allocation_stats.h"
#include "symbols/symbolize.h"
#include "read/damage/trace_check.h"
#include "cli/trace_inputs.h"
#include "base/json_text.h"
#include "base/option_file.h"
#include "stacks/categories.h"

namespace cumemtrace {
namespace {

// One trace's share of the command: what it says on stderr, then its report, and the
// devices it names (for the job view of several traces).
struct TraceReport {
  std::string errors;
  std::optional<Report> report;
  std::vector<DeviceInfo> devices;
};

// `base`: what the command line asked for (top, frames, categories, ranges).
TraceReport report_one(const std::string& path, const ReportOptions& base) {
  TraceReport out;
  TraceFile file(path);
  Trace& t = file.trace();
  std::ostringstream errors;
  const bool readable = check_trace(t, errors);
  out.errors = errors.str();
  if (!readable) return out;
  // A trace never symbolized (the job was not started by `cumemtrace run`) can still
  // be symbolized here when the module files exist on this machine.
  std::unordered_map<uint64_t, Symbol> extra;
  if (t.symbols.empty()) extra = resolve_symbols(t);
  ReportOptions opt = base;
  opt.extra_symbols = &extra;
  out.report = build_report(t, file.events(), opt);
  if (file.changed()) {
    out.errors += "cumemtrace report: " + file.changed_message() + "\n";
    out.report.reset();
    return out;
  }
  out.devices = std::move(t.devices);
  return out;
}

// `args`: traces, folders of traces or manifests (trace_inputs.h). `rank_tolerance`:
// percent of the median peak past which a rank is imbalanced (job.h), with several traces.
// `base`: the options every trace's report is built with.
// `json_opt`: what the JSON lists (report_json.h).
int cmd_report(const std::vector<std::string>& args, bool json, const JsonOptions& json_opt, const ReportOptions& base,
               double rank_tolerance) {
  int rc = 0;
  const std::vector<std::string> paths = expand_trace_inputs(args);
  if (paths.empty()) {
    std::cerr << "cumemtrace report: no trace found in " << args.front() << "\n";
    return 1;
  }
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  std::vector<Report> reports;
  std::vector<std::vector<DeviceInfo>> devices;
  std::ostringstream per_trace;
  bool first = true;
  const auto render = [&](const Report& rep) {
    if (json) {
      all.push_back(to_json(rep, json_opt));
    } else {
      if (!first) per_trace << "\n" << std::string(78, '=') << "\n\n";
      write_text(per_trace, rep);
    }
    first = false;
  };
  // One trace: progress on stderr when it takes long; several: read and analysed in
  // parallel, silently, then printed in the order given.
  std::optional<ProgressScope> progress;
  if (paths.size() == 1) progress.emplace("cumemtrace report");
  auto done = parallel_map(paths.size(), [&](size_t i) { return report_one(paths[i], base); });
  for (auto& [errors, rep, devs] : done) {
    progress.reset();  // the bar's line ends before anything else is said
    std::cerr << errors;
    if (!rep) {
      rc = 1;
      continue;
    }
    if (paths.size() > 1) {
      devices.push_back(std::move(devs));
      reports.push_back(std::move(*rep));
    } else {
      render(*rep);
    }
    rep.reset();  // printed (or kept for the job view): this copy can go
  }
  // Several traces: the job view first (job.h), then one report per trace, each as the job
  // tells it (its exports still open in another process apart).
  std::optional<Job> job;
  if (paths.size() > 1) {
    job = build_job(reports, devices, rank_tolerance);
    set_aside_exports(*job, reports);
    for (const Report& rep : reports) render(rep);
  }
  if (json) {
    // One trace: one object; several: {"job": ..., "traces": [one object each]} (docs/report-json.md).
    if (job) {
      nlohmann::ordered_json j;
      j["job"] = job_to_json(*job);
      j["traces"] = std::move(all);
      std::cout << json_text(j, 2) << "\n";
    } else if (!all.empty()) {
      std::cout << json_text(all[0], 2) << "\n";
    }
  } else {
    if (job) {
      write_job_text(std::cout, *job);
      std::cout << "\n" << std::string(78, '=') << "\n\n";
    }
    std::cout << per_trace.str();
  }
  return rc;
}

// `report --view NAME` (views.h): that view of each trace, in place of the report; several
// traces one after another, each under its path.
int cmd_view(const std::vector<std::string>& args, const View& view, const ReportOptions& base) {
  const std::vector<std::string> paths = expand_trace_inputs(args);
  if (paths.empty()) {
    std::cerr << "cumemtrace report: no trace found in " << args.front() << "\n";
    return 1;
  }
  int rc = 0;
  bool first = true;
  for (const std::string& path : paths) {
    TraceFile file(path);
    Trace& t = file.trace();
    if (!check_trace(t, std::cerr)) {
      rc = 1;
      continue;
    }
    std::unordered_map<uint64_t, Symbol> extra;
    if (t.symbols.empty()) extra = resolve_symbols(t);
    Stacks stacks(t);
    stacks.set_symbols(&extra);
    AllocationScan scan(stacks);
    file.events().scan([&](const Event& e, size_t) { scan.observe(e); });
    if (file.changed()) {
      std::cerr << "cumemtrace report: " << file.changed_message() << "\n";
      rc = 1;
      continue;
    }
    if (!first) std::cout << "\n";
    if (paths.size() > 1) std::cout << printable(path) << "\n";
    first = false;
    view.write(std::cout, scan.finish(), ViewContext{stacks, base.top, base.frames});
  }
  return rc;
}

}  // namespace

Command register_report(CLI::App& app) {
  struct Options {
    std::vector<std::string> traces;
    bool json = false;
    bool all_boundaries = false;  // `--all-boundaries`: the JSON lists every iteration boundary
    long long top = 10, frames = 6;
    double rank_tolerance = 10;
    std::string by;  // "category", "range", several joined by ',' (or '\n' between --by's)
    std::string categories_file;
    std::optional<CategoryRules> categories;
    bool by_range = false, by_function = false;  // set by check_usage from `by`
    std::string view;                            // `--view`: one of views.def's, in place of the report
  };
  const auto o = std::make_shared<Options>();
  Command c;
  c.sub = app.add_subcommand("report", "Report on one or more traces");
  add_traces(c.sub, o->traces);
  c.sub
      ->add_option("--rank-tolerance", o->rank_tolerance,
                   "Several traces: a rank whose peak differs from the median by more than PCT is a finding")
      ->capture_default_str()
      ->check(kPercent);
  CLI::Option* json = c.sub->add_flag("--json", o->json, "JSON output (docs/report-json.md)");
  c.sub
      ->add_flag("--all-boundaries", o->all_boundaries,
                 "With --json: every iteration boundary, where the JSON lists the first 8 and the last 8")
      ->needs(json);
  c.sub->add_option("--top", o->top, "Call sites per table")->capture_default_str()->check(kCount);
  c.sub->add_option("--frames", o->frames, "Frames per call site")->capture_default_str()->check(kCount);
  c.sub
      ->add_option("--by", o->by,
                   "Also figures by: category (docs/categories.md), range (memory per NVTX range, tag and mark), "
                   "function (memory per function of the program's); "
                   "several: --by category,range")
      // One word per --by, so that the traces after it stay traces; --by given twice joins.
      ->multi_option_policy(CLI::MultiOptionPolicy::Join);
  c.sub
      ->add_option(
          "--categories", o->categories_file,
          "Category rules of yours (CATEGORY REGEX per line), tried before the defaults; implies --by category")
      ->check(kNonEmpty);
  std::string view_help = "In place of the report, one view of each trace:";
  std::vector<std::string> view_names;
  for (const View& v : all_views()) {
    view_names.emplace_back(v.name);
    view_help += (view_names.size() > 1 ? "; " : " ") + std::string(v.name) + " (" + std::string(v.summary) + ")";
  }
  CLI::Option* view = c.sub->add_option("--view", o->view, view_help + " (docs/cli.md, \"Views\")");
  view->excludes(json)->excludes(c.sub->get_option("--by"));
  add_shared_options(c.sub, kCallSiteOptions);
  // A rules file that cannot be used is a usage error, said before any trace is read.
  c.check_usage = [o, view_names, sub = c.sub] {
    if (sub->count("--view") && !find_view(o->view)) {
      std::string all;
      for (const auto& n : view_names) all += (all.empty() ? "" : ", ") + n;
      std::cerr << "cumemtrace report: --view " << printable(o->view) << ": not one of " << all
                << did_you_mean(o->view, view_names) << "\n";
      return 2;
    }
    std::vector<std::string> by;
    for (size_t at = 0; at <= o->by.size() && !o->by.empty();) {
      const size_t next = o->by.find_first_of(",\n", at);
      const std::string word = o->by.substr(at, next == std::string::npos ? std::string::npos : next - at);
      const std::vector<std::string> kinds = {"category", "range", "function"};
      if (std::find(kinds.begin(), kinds.end(), word) == kinds.end()) {
        std::cerr << "cumemtrace report: --by " << printable(word) << ": not one of category, range, function"
                  << did_you_mean(word, kinds) << "\n";
        return 2;
      }
      by.push_back(word);
      if (next == std::string::npos) break;
      at = next + 1;
    }
    o->by_range = std::find(by.begin(), by.end(), "range") != by.end();
    o->by_function = std::find(by.begin(), by.end(), "function") != by.end();
    const bool by_category = std::find(by.begin(), by.end(), "category") != by.end();
    if (!by_category && o->categories_file.empty()) return 0;
    o->categories.emplace();
    if (o->categories_file.empty()) return 0;
    std::string why;
    const auto text = read_option_file(o->categories_file, why);  // an empty file adds no rules
    if (!text) {
      std::cerr << "cumemtrace report: --categories " << printable(o->categories_file) << ": " << why << "\n";
      return 2;
    }
    try {
      o->categories->add_user_rules(*text);
    } catch (const CategoryRulesError& e) {
      std::cerr << "cumemtrace report: --categories " << printable(o->categories_file) << ": " << e.what() << "\n";
      return 2;
    }
    return 0;
  };
  // cmd_report expands its own traces.
  c.run = [o] {
    ReportOptions base;
    base.top = size_t(o->top);
    base.frames = size_t(o->frames);
    base.categories = o->categories ? &*o->categories : nullptr;
    base.by_range = o->by_range;
    base.by_function = o->by_function;
    if (const View* v = o->view.empty() ? nullptr : find_view(o->view)) return cmd_view(o->traces, *v, base);
    return cmd_report(o->traces, o->json, JsonOptions{o->all_boundaries}, base, o->rank_tolerance);
  };
  return c;
}

}  // namespace cumemtrace
