// `cumemtrace check TRACE… [limits] [--junit FILE] [--github]` (docs/cli.md). Exit status:
// 0 when every limit holds, 1 when one does not, 2 for a usage error or a trace that
// cannot be read.
#include "cli/command.h"

#include <fstream>
#include <iostream>
#include <optional>

#include "cli/baseline_command.h"
#include "gate/check.h"
#include "gate/completeness.h"
#include "base/escape.h"
#include "base/plural.h"
#include "base/size_parse.h"
#include "base/plural.h"
#include "reports/job/job.h"
#include "render/junit.h"
#include "base/output_file.h"
#include "base/parallel.h"
#include "reports/report.h"
#include "symbols/symbolize.h"
#include "cli/trace_inputs.h"
#include "base/units.h"

namespace cumemtrace {
namespace {

struct CheckOptions {
  std::vector<std::string> traces;
  std::vector<Limit> limits;
  std::string baseline;         // --baseline FILE (a baseline or a trace), or empty
  std::string tolerance = "0";  // --tolerance: PCT% of the baseline figure, or SIZE
  std::string junit;            // file to write, or empty
  bool github = false;          // print ::error workflow commands
  // --max-rank-imbalance PCT: a limit on the job of all traces together (job.h): no rank's
  // peak on its own device may differ from the median by more than PCT percent.
  std::optional<double> max_rank_imbalance;
  bool allow_incomplete = false;  // a verdict on incomplete figures (completeness.h), saying so
  std::string limit_names;        // "--max-peak, ..., --baseline": the options of --help's "Limits"
};

constexpr const char* kLimits = "Limits";

std::string joined(const std::vector<std::string>& traces) {
  std::string out;
  for (const auto& t : traces) out += (out.empty() ? "" : ", ") + t;
  return out;
}

// A FAIL line against a baseline names both sides: "pr.trace (against baseline main.json)".
std::string against_baseline(const std::vector<std::string>& traces, const std::string& baseline) {
  return joined(traces) + " (against baseline " + baseline + ")";
}

// The job's limit: one result over all traces (job.h's rank-imbalance).
LimitResult check_rank_imbalance(const Job& job, double limit) {
  LimitResult r;
  r.name = "max-rank-imbalance";
  r.ok = job.max_imbalance_percent <= limit;
  r.message = "largest difference of a rank's peak from the median " + iec(job.median_peak_bytes) + ": " +
              fixed(job.max_imbalance_percent, 1) + "%, limit " + fixed(limit, 1) + "%";
  for (const auto& f : job.findings) {
    if (f.kind != JobFinding::Kind::kRankImbalance) continue;
    r.message += "; " + f.message;
    if (!f.sites.empty()) r.message += " (most at " + f.sites.front().site + ")";
  }
  return r;
}

int run_check(const CheckOptions& given) {
  CheckOptions opt = given;
  opt.traces = expand_trace_inputs(given.traces);
  if (opt.traces.empty()) {  // else a CI gate would pass having checked nothing
    std::cerr << "cumemtrace check: no trace found in " << printable(given.traces.front()) << "\n";
    return 2;
  }
  if (opt.limits.empty() && opt.baseline.empty() && !opt.max_rank_imbalance) {
    std::cerr << "cumemtrace check: no limit given (" << opt.limit_names << ")\n";
    return 2;
  }
  std::vector<TraceCheck> checks;
  if (!opt.baseline.empty()) {
    std::string error;
    const auto tol = parse_tolerance(opt.tolerance, &error);
    Incomplete incomplete;
    incomplete.allow = opt.allow_incomplete;
    const auto base = tol ? load_baseline(opt.baseline, &error, &incomplete) : std::nullopt;
    const auto now = base ? baseline_of_traces(opt.traces, &error, &incomplete) : std::nullopt;
    if (!now) {
      std::cerr << "cumemtrace check: " << (tol ? "" : "--tolerance: ") << error << "\n";
      return incomplete.found ? kExitIncomplete : 2;
    }
    checks.push_back(check_against(*base, *now, *tol));
    checks.back().path = against_baseline(opt.traces, opt.baseline);
    checks.back().incomplete = join_reasons(incomplete.notes);
    for (auto& r : checks.back().results)
      if (!incomplete.notes.empty()) r.note = "on incomplete figures (" + checks.back().incomplete + ")";
  }
  // Traces are read and checked in parallel; results and messages stay in the order given.
  struct Checked {
    std::optional<std::string> unreadable;  // the message, when the trace could not be read
    std::optional<TraceCheck> check;        // with limits
    std::optional<Report> report;           // with --max-rank-imbalance, for the job view
    std::vector<DeviceInfo> devices;
  };
  const bool per_trace = !opt.limits.empty() || opt.max_rank_imbalance;
  const std::vector<std::string> traces = per_trace ? opt.traces : std::vector<std::string>{};
  auto checked = parallel_map(traces.size(), [&](size_t i) {
    Checked out;
    TraceFile file(traces[i]);
    Trace& t = file.trace();
    if (!t.header_ok) {
      out.unreadable = "cumemtrace check: " + traces[i] + ": " + (t.error ? t.error->message : "unreadable");
      return out;
    }
    std::unordered_map<uint64_t, Symbol> symbols;
    if (t.symbols.empty()) symbols = resolve_symbols(t);
    ReportOptions ro;
    ro.extra_symbols = &symbols;
    ro.frames = 1;
    Report rep = build_report(t, file.events(), ro);
    const std::string why = join_reasons(incomplete_reasons(rep));
    if (!why.empty() && !opt.allow_incomplete) {  // no verdict without the data
      out.check = TraceCheck{traces[i], {}, why};
      LimitResult r;
      r.name = "figures-complete";
      r.ok = false;
      r.incomplete = true;
      r.message = "figures are incomplete (" + why +
                  "): no limit judged (--allow-incomplete judges them on "
                  "incomplete figures)";
      out.check->results.push_back(std::move(r));
    } else if (!opt.limits.empty()) {
      out.check = check_trace(t, file.events(), rep, opt.limits);
      out.check->incomplete = why;
      for (auto& r : out.check->results)
        if (!why.empty()) r.note = "on incomplete figures (" + why + ")";
    }
    if (file.changed()) {
      out.unreadable = "cumemtrace check: " + file.changed_message();
      out.check.reset();
      return out;
    }
    if (!why.empty() && !opt.allow_incomplete) return out;
    if (opt.max_rank_imbalance) {
      out.devices = std::move(t.devices);
      out.report = std::move(rep);
    }
    return out;
  });
  std::vector<Report> reports;
  std::vector<std::vector<DeviceInfo>> devices;
  bool unreadable = false;  // every one is said, not only the first
  for (auto& c : checked) {
    if (c.unreadable) std::cerr << *c.unreadable << "\n";
    unreadable |= bool(c.unreadable);
  }
  if (unreadable) return 2;
  for (auto& c : checked) {
    if (c.check) checks.push_back(std::move(*c.check));
    if (c.report) {
      reports.push_back(std::move(*c.report));
      devices.push_back(std::move(c.devices));
    }
  }
  if (opt.max_rank_imbalance) {
    TraceCheck c;
    c.path = "job of " + joined(opt.traces);
    c.results.push_back(
        check_rank_imbalance(build_job(reports, devices, *opt.max_rank_imbalance), *opt.max_rank_imbalance));
    checks.push_back(std::move(c));
  }
  // A gate that measured nothing passes nothing (docs/cli.md, exit 4).
  for (auto& c : checks)
    if (c.results.empty()) {
      LimitResult r;
      r.name = "judged";
      r.ok = false;
      r.unjudged = true;
      r.message = "nothing measured: no limit applies (no device seen" +
                  std::string(opt.baseline.empty() ? ", or none a limit names)" : " in the baseline or the traces)");
      c.results.push_back(std::move(r));
    }
  bool ok = true, incomplete = false, on_incomplete = false, unjudged = false;
  for (const auto& c : checks) {
    on_incomplete |= !c.incomplete.empty();
    for (const auto& r : c.results) {
      if (r.ok && !r.unseen.empty())
        std::cout << "NOT VISIBLE " << printable(c.path) << ": " << r.name << ": " << printable(r.unseen) << "\n";
      if (r.ok) continue;
      const std::string message = r.message + (r.note.empty() ? "" : " " + r.note);
      if (r.incomplete) incomplete = true;
      else if (r.unjudged) unjudged = true;
      else ok = false;
      std::cout << (r.incomplete ? "INCOMPLETE "
                    : r.unjudged ? "NOT JUDGED "
                                 : "FAIL ")
                << printable(c.path) << ": " << r.name << ": " << printable(message) << "\n";
      if (opt.github) std::cout << "::error title=cumemtrace " << r.name << "::" << github_message(message) << "\n";
    }
  }
  if (!opt.junit.empty()) {
    OutputFile out(opt.junit, opt.traces);
    write_junit(out.stream(), checks);
    if (!out.commit()) {
      std::cerr << "cumemtrace check: " << out.error() << "\n";
      return out.exit_status();
    }
    std::cerr << "cumemtrace check: JUnit XML written to " << printable(opt.junit) << "\n";
  }
  size_t n = 0;
  for (const auto& c : checks)
    for (const auto& r : c.results) n += !r.unjudged;
  if (incomplete) {
    std::cerr << "cumemtrace check: figures incomplete: no verdict on those traces (exit " << kExitIncomplete << ")\n";
    if (ok) return kExitIncomplete;
  }
  if (unjudged) {
    std::cerr << "cumemtrace check: a trace measured nothing: no verdict on it (exit " << kExitNotJudged << ")\n";
    if (ok) return kExitNotJudged;
  }
  std::cerr << "cumemtrace check: " << (ok && n != 1 ? "all " : "") << count_of(n, "limit check")
            << (ok ? (n == 1 ? " holds" : " hold") : (n == 1 ? " failed" : ", some failed"))
            << (on_incomplete && !incomplete ? " on incomplete figures" : "") << "\n";
  return ok ? 0 : 1;
}

}  // namespace

Command register_check(CLI::App& app) {
  struct Options {
    CheckOptions check;
    std::vector<std::string> max_peak, max_leaked, max_failed, max_single, max_gap, max_growth, max_pool_growth;
    double max_rank_imbalance = 0;
    CLI::Option* max_rank_option = nullptr;
    bool count_recovered = false;
  };
  const auto o = std::make_shared<Options>();
  Command c;
  c.sub = app.add_subcommand("check", "Exit 1 when a trace breaks a limit (CI); 0 when all hold");
  add_traces(c.sub, o->check.traces);
  // Every limit is in --help's "Limits" group; a check given none lists that group.
  c.sub->option_defaults()->group(kLimits);
  c.sub->add_option("--max-peak", o->max_peak, "Peak tracked device bytes (SIZE, or dN:SIZE for one device)");
  c.sub->add_option("--max-leaked", o->max_leaked, "Device memory live at a clean end (SIZE)");
  c.sub->add_option("--max-failed", o->max_failed, "Failed allocations not recovered from, retries folded (N)");
  c.sub->add_flag("--count-recovered", o->count_recovered, "--max-failed counts failures recovered from too")
      ->group("Options");  // how --max-failed counts, not a limit of its own
  c.sub->add_option("--max-single", o->max_single, "Largest single allocation (SIZE, or PCT% of the device)");
  c.sub->add_option("--max-gap-ratio", o->max_gap, "Gap ratio at the peak (0..1)");
  c.sub->add_option("--max-growth", o->max_growth, "Steady growth per iteration of any call site (SIZE)");
  c.sub->add_option("--max-pool-growth", o->max_pool_growth,
                    "Steady growth per iteration of a pool's regions at any call site (SIZE; NVTX memory extension)");
  o->max_rank_option = c.sub
                           ->add_option("--max-rank-imbalance", o->max_rank_imbalance,
                                        "Largest difference of a rank's peak from the median over all traces (PCT)")
                           ->check(kPercent);
  c.sub->add_option("--baseline", o->check.baseline, "Fail when peak or leaks grew past a baseline (file or trace)");
  c.sub->option_defaults()->group("Options");
  const CLI::App& registered = *c.sub;
  for (const CLI::Option* limit :
       registered.get_options([](const CLI::Option* x) { return x->get_group() == kLimits; }))
    o->check.limit_names += (o->check.limit_names.empty() ? "" : ", ") + limit->get_name();
  c.sub->add_option("--junit", o->check.junit, "Write JUnit XML here");
  c.sub->add_flag("--github", o->check.github, "Also print GitHub Actions ::error lines");
  c.sub->add_option("--tolerance", o->check.tolerance, "Growth allowed over the baseline: PCT% or SIZE")
      ->capture_default_str();
  add_shared_options(c.sub, kCallSiteOptions | kAllowIncomplete | kForceOutput);
  c.check_usage = [o] {
    if (o->max_rank_option->count()) o->check.max_rank_imbalance = o->max_rank_imbalance;
    const std::pair<const std::vector<std::string>*, Limit::What> kinds[] = {
        {&o->max_peak, Limit::What::kPeak},
        {&o->max_leaked, Limit::What::kLeaked},
        {&o->max_failed, Limit::What::kFailed},
        {&o->max_single, Limit::What::kSingle},
        {&o->max_gap, Limit::What::kGapRatio},
        {&o->max_growth, Limit::What::kGrowth},
        {&o->max_pool_growth, Limit::What::kPoolGrowth}};
    for (const auto& [values, what] : kinds) {
      for (size_t i = 0; i < values->size(); ++i) {
        const std::string& v = (*values)[i];
        std::string error;
        auto l = parse_limit(what, v, &error);
        // The option takes several values, so "--max-peak 40 GiB" unquoted reaches it as two:
        // the number (which may fail alone, "1.5") and then its unit.
        const auto split = [&](size_t at) {
          if (at + 1 >= values->size()) return false;
          const std::string &number = (*values)[at], &unit = (*values)[at + 1];
          if (!is_size_unit(unit) || !parse_limit(what, number + unit, nullptr)) return false;
          error = "'" + number + " " + unit + "' is one size split by a space: write " + number + unit +
                  " (or quote it: '" + number + " " + unit + "')";
          return true;
        };
        if (!l && !split(i) && i > 0) split(i - 1);
        if (!l) {
          std::cerr << "cumemtrace check: --" << limit_name(what) << ": " << error << "\n";
          return 2;
        }
        l->count_recovered = o->count_recovered;
        o->check.limits.push_back(*l);
      }
    }
    return 0;
  };
  // run_check expands its own traces: naming none is a usage error (2) there.
  c.run = [o] {
    o->check.allow_incomplete = allow_incomplete();
    return run_check(o->check);
  };
  return c;
}

}  // namespace cumemtrace
