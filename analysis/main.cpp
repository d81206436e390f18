// The `cumemtrace` command line: run, report, live, index, symbolize, export, dump. docs/cli.md is the
// user's description; keep the two in step.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>

#include <charconv>
#include <iostream>
#include <sstream>
#include <string_view>
#include <vector>

#include "allocator_frames.h"
#include "call_site_rule.h"
#include "baseline_command.h"
#include "check_command.h"
#include "commands.h"
#include "escape.h"
#include "nearest_command.h"
#include "html_command.h"
#include "escape.h"
#include "output_file.h"
#include "trace_inputs.h"
#include "run_command.h"
#include "torch_oom.h"

using namespace cumemtrace;

namespace {

// `run --help`, in the shape CLI11 gives every other command's help (it is parsed by
// hand: see parse_run).
constexpr const char* kRunHelp =
    "Run a command with CUDA memory tracing, then symbolize its traces\n"
    "Usage: cumemtrace run [OPTIONS] [--] CMD ARGS...\n"
    "\n"
    "Runs CMD with libcumemtrace.so preloaded and exits with CMD's status (128+signal if a\n"
    "signal killed it; 127 if CMD cannot be run).\n"
    "\n"
    "Positionals:\n"
    "  CMD ARGS...                 The command, verbatim (options of ours end at -- or at its first word)\n"
    "\n"
    "Options:\n"
    "  -h,--help                   Print this help message and exit\n"
    "  -o,--output PATTERN         Trace file pattern (%p pid, %h host, %r rank; a missing folder is created)\n"
    "  --depth N                   Native frames per stack (default 32)\n"
    "  --torch-oom                 Record PyTorch's block map at an out-of-memory error (docs/cli.md)\n";
constexpr const char* kRunUsage = "usage: cumemtrace run [-o|--output PATTERN] [--depth N] [--torch-oom] [--] CMD ARGS...\n";

// Options of `run` end at `--` or at the first word that is not one of ours: all that
// follows is the command, verbatim.
int parse_run(int argc, char** argv) {
  RunOptions opt;
  int i = 2;
  auto value = [&](std::string_view arg, std::string_view name, std::string& out) {
    if (arg == name) {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(name) + " needs a value");
      out = argv[++i];
      return true;
    }
    if (arg.size() > name.size() + 1 && arg.starts_with(name) && arg[name.size()] == '=') {
      out = std::string(arg.substr(name.size() + 1));
      return true;
    }
    return false;
  };
  try {
    for (; i < argc; ++i) {
      std::string_view a = argv[i];
      std::string v;
      if (a == "--") {
        ++i;
        break;
      }
      if (a == "-h" || a == "--help") {
        std::cout << kRunHelp;
        return 0;
      }
      if (value(a, "-o", v) || value(a, "--output", v)) {
        opt.output = v;
      } else if (value(a, "--depth", v)) {
        int d = -1;
        const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
        if (ec != std::errc() || p != v.data() + v.size() || d < 0)
          throw std::invalid_argument("--depth wants a count of frames (0 or more), not '" + v + "'");
        opt.depth = d;
      } else if (a == "--torch-oom") {
        if (!enable_torch_oom()) return 127;
      } else if (a.starts_with("-")) {
        throw std::invalid_argument("unknown option " + std::string(a) + " (put the command after --)");
      } else {
        break;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "cumemtrace run: " << e.what() << "\n" << kRunUsage;
    return 2;
  }
  for (; i < argc; ++i) opt.command.emplace_back(argv[i]);
  return run_traced(opt);
}

// A percentage: a finite number >= 0 (CLI::NonNegativeNumber lets "nan" through).
const CLI::Validator kPercent(
    [](std::string& v) -> std::string {
      double d = 0;
      try {
        size_t used = 0;
        d = std::stod(v, &used);
        if (used != v.size()) return "not a number: " + v;
      } catch (const std::exception&) {
        return "not a number: " + v;
      }
      return std::isfinite(d) && d >= 0 ? std::string() : "not a finite percentage >= 0: " + v;
    },
    "PCT");

}  // namespace

// CLI11 names the option in its message: "--top: a count (0 or more), not '-1'".
CLI::Validator count_at_least(long long least) {
  return CLI::Validator(
      [least](std::string& v) {
        long long n = 0;
        const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        return ec == std::errc() && p == v.data() + v.size() && n >= least
                   ? std::string()
                   : "a count (" + std::to_string(least) + " or more), not '" + v + "'";
      },
      "COUNT");
}
const CLI::Validator kCount = count_at_least(0);
const CLI::Validator kPositiveCount = count_at_least(1);
const CLI::Validator kNonEmpty([](std::string& v) { return v.empty() ? std::string("an empty name") : std::string(); },
                               "FILE");

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "run") return parse_run(argc, argv);
  CLI::App app{"cumemtrace: who holds the CUDA device memory, where, and why an allocation failed"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("cumemtrace ") + CUMEMTRACE_VERSION);

  // `run` is parsed by hand (parse_run): the command's own options must pass through
  // untouched, and CLI11's prefix-command mode reorders them. This entry is for --help.
  app.add_subcommand("run", "Run a command with CUDA memory tracing, then symbolize its traces")
      ->footer("usage: cumemtrace run [-o PATTERN] [--depth N] [--torch-oom] [--] CMD ARGS...");

  std::vector<std::string> report_paths;
  bool report_json = false;
  long long top = 10, frames = 6;
  auto* report = app.add_subcommand("report", "Report on one or more traces");
  double rank_tolerance = 10;
  report->add_option("traces", report_paths, "Trace files, folders of traces, or a `run` manifest")->required();
  report->add_option("--rank-tolerance", rank_tolerance, "Several traces: a rank whose peak differs from the median by more than PCT is a finding")
      ->capture_default_str()
      ->check(kPercent);
  report->add_flag("--json", report_json, "JSON output (docs/report-json.md)");
  report->add_option("--top", top, "Call sites per table")->capture_default_str()->check(kCount);
  report->add_option("--frames", frames, "Frames per call site")->capture_default_str()->check(kCount);

  std::string live_path;
  std::vector<std::string> live_at;
  bool live_json = false;
  auto* live = app.add_subcommand("live", "What was live at given moments");
  live->add_option("trace", live_path, "Trace file")->required();
  live->add_option("--at", live_at,
                   "CLOCK_MONOTONIC ns, seconds since start ('12.5 s'), 'peak' or 'end'; repeat or give a comma list")
      ->required()
      ->take_all();
  live->add_flag("--json", live_json, "JSON output: an array, one object per --at");

  std::string index_path, index_out;
  int64_t index_every = 500'000;
  auto* idx = app.add_subcommand("index", "Write TRACE.idx: checkpoints that let `live --at` start near a moment");
  idx->add_option("trace", index_path, "Trace file")->required();
  idx->add_option("-o,--output", index_out, "Index file (default TRACE.idx, where `live` looks for it)")
      ->check(kNonEmpty);
  idx->add_option("--every", index_every, "Events between checkpoints, at least (they fall at chunk ends)")
      ->capture_default_str()
      ->check(kPositiveCount);

  std::vector<std::string> sym_paths;
  auto* sym = app.add_subcommand("symbolize", "Append symbols to traces (needs the modules' files)");
  sym->add_option("traces", sym_paths, "Trace files, folders of traces, or a `run` manifest")->required();

  CheckOptions check_opt;
  std::vector<std::string> max_peak, max_leaked, max_failed, max_single, max_gap, max_growth;
  auto* chk = app.add_subcommand("check", "Exit 1 when a trace breaks a limit (CI); 0 when all hold");
  chk->add_option("traces", check_opt.traces, "Trace files, folders of traces, or a `run` manifest")->required();
  chk->add_option("--max-peak", max_peak, "Peak tracked device bytes (SIZE, or dN:SIZE for one device)");
  chk->add_option("--max-leaked", max_leaked, "Device memory live at a clean end (SIZE)");
  chk->add_option("--max-failed", max_failed, "Failed allocations, retries folded (N)");
  chk->add_option("--max-single", max_single, "Largest single allocation (SIZE, or PCT% of the device)");
  chk->add_option("--max-gap-ratio", max_gap, "Gap ratio at the peak (0..1)");
  chk->add_option("--max-growth", max_growth, "Steady growth per iteration of any call site (SIZE)");
  double max_rank_imbalance = 0;
  auto* max_rank_opt = chk->add_option("--max-rank-imbalance", max_rank_imbalance,
                                       "Largest difference of a rank's peak from the median over all traces (PCT)")
                           ->check(kPercent);
  chk->add_option("--junit", check_opt.junit, "Write JUnit XML here");
  chk->add_flag("--github", check_opt.github, "Also print GitHub Actions ::error lines");
  chk->add_option("--baseline", check_opt.baseline, "Fail when peak or leaks grew past a baseline (file or trace)");
  chk->add_option("--tolerance", check_opt.tolerance, "Growth allowed over the baseline: PCT% or SIZE")
      ->capture_default_str();

  std::vector<std::string> base_paths;
  std::string base_out;
  auto* base = app.add_subcommand("baseline", "Write a JSON baseline of traces for check --baseline and diff");
  base->add_option("traces", base_paths, "Trace files, folders of traces, or a `run` manifest")->required();
  base->add_option("-o,--output", base_out, "Baseline file to write")->required();

  std::string diff_old, diff_new;
  bool diff_json = false;
  auto* dif = app.add_subcommand("diff", "Peak, leaks and call sites: what changed from OLD to NEW");
  dif->add_option("old", diff_old, "Trace or baseline file")->required();
  dif->add_option("new", diff_new, "Trace or baseline file")->required();
  dif->add_flag("--json", diff_json, "JSON output");

  ExportOptions export_opt;
  auto* exp = app.add_subcommand("export", "Write traces for other tools: memory_viz, Perfetto, flame graphs");
  exp->add_option("traces", export_opt.paths, "Trace files, folders of traces, or a `run` manifest (memviz: one)")
      ->required();
  exp->add_option("--format", export_opt.format,
                  "memviz (PyTorch pickle), chrome (trace-event JSON), folded (stacks), jsonl (tables)")
      ->required();
  exp->add_option("-o,--output", export_opt.output, "File to write (default: stdout); jsonl: a directory");
  exp->add_flag("--zstd", export_opt.zstd, "jsonl: zstd-compressed NAME.jsonl.zst");
  exp->add_option("--at", export_opt.at, "folded: the moment, 'peak' (default), 'end', ns or '12.5 s'");
  HtmlOptions html_opt;
  long long html_top = 10, html_frames = 6;
  auto* html = app.add_subcommand("html", "Write one self-contained HTML page of traces (docs/html-report.md)");
  html->add_option("traces", html_opt.traces,
                   "Trace files, folders of traces, or a `run` manifest (several: one job, a process selector)")
      ->required();
  html->add_option("-o,--output", html_opt.output, "Page to write")->required();
  html->add_option("--top", html_top, "Call sites per table")->capture_default_str()->check(kCount);
  html->add_option("--frames", html_frames, "Frames per call site in the tables")->capture_default_str()->check(kCount);

  // Where a call site is (allocator_frames.h): for every command that names call sites.
  std::vector<std::string> allocator_frames;
  bool no_allocator_skip = false;
  for (CLI::App* c : {report, chk, base, dif, exp, html}) {
    c->add_option("--allocator-frames", allocator_frames,
                  "A function-name regex of allocator frames to skip past to the call site (repeatable)");
    c->add_flag("--no-allocator-skip", no_allocator_skip, "Call sites at the allocator's own frames");
  }
  // No verdict on incomplete figures unless asked (completeness.h).
  bool allow_incomplete = false;
  for (CLI::App* c : {chk, base, dif})
    c->add_flag("--allow-incomplete", allow_incomplete,
                "Give a verdict on a trace whose figures are incomplete (damaged, cut, events dropped), saying so");
  // Files the commands write (output_file.h): a FIFO at the name without a reader.
  bool output_force = false;
  for (CLI::App* c : {chk, base, exp, html, idx})
    c->add_flag("--force", output_force, "-o at a FIFO that no one reads yet: wait for a reader instead of refusing");
  // The call-site rule (call_site_rule.h), for the same commands.
  std::string call_site = "user";
  std::vector<std::string> user_packages;
  for (CLI::App* c : {report, chk, base, dif, exp, html}) {
    c->add_option("--call-site", call_site,
                  "user (the program's own Python line or native frame), native (Python aside), innermost")
        ->check(CLI::IsMember({"user", "native", "innermost"}));
    c->add_option("--user-package", user_packages,
                  "A package under site-packages whose Python frames are the user's own (repeatable)");
  }

  std::string dump_path;
  auto* dmp = app.add_subcommand("dump", "One line per record (debugging; unstable format)");
  dmp->add_option("trace", dump_path, "Trace file")->required();

  if (argc >= 2 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* c : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(c->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      const std::string near = nearest_command(argv[1], names);
      std::cerr << "cumemtrace: '" << printable(argv[1]) << "' is not a command"
                << (near.empty() ? "" : "; did you mean '" + near + "'?") << "\n(commands: ";
      for (size_t i = 0; i < names.size(); ++i) std::cerr << (i ? ", " : "") << names[i];
      std::cerr << "; `cumemtrace --help` says more)\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end the same way; CLI11 gives them 0, every real usage
    // error its own code above 100. docs/cli.md promises 2 for all usage errors.
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  if (*chk) {
    if (max_rank_opt->count()) check_opt.max_rank_imbalance = max_rank_imbalance;
    const std::pair<const std::vector<std::string>*, Limit::What> kinds[] = {
        {&max_peak, Limit::What::kPeak},     {&max_leaked, Limit::What::kLeaked},
        {&max_failed, Limit::What::kFailed}, {&max_single, Limit::What::kSingle},
        {&max_gap, Limit::What::kGapRatio},  {&max_growth, Limit::What::kGrowth}};
    for (const auto& [values, what] : kinds) {
      for (const auto& v : *values) {
        std::string error;
        auto l = parse_limit(what, v, &error);
        if (!l) {
          std::cerr << "cumemtrace check: --" << limit_name(what) << ": " << error << "\n";
          return 2;
        }
        check_opt.limits.push_back(*l);
      }
    }
  }

  CallSiteRule rule = CallSiteRule::kUser;
  parse_call_site_rule(call_site, rule);  // checked by CLI11 above
  set_call_site_rule(rule, user_packages);
  try {
    set_allocator_frames(allocator_frames, !no_allocator_skip);
  } catch (const std::invalid_argument& e) {
    std::cerr << "cumemtrace: --allocator-frames: not a regular expression: " << e.what() << "\n";
    return 2;
  }

  set_output_force(output_force);
  // Every command that reads traces takes files, folders and manifests alike (trace_inputs.h);
  // `report` and `check` expand their own. Naming no trace is the status of an unreadable one.
  const auto expand = [](std::vector<std::string>& args, const char* command) {
    const std::vector<std::string> given = args;
    args = expand_trace_inputs(given);
    if (args.empty()) std::cerr << "cumemtrace " << command << ": no trace found in " << printable(given.front()) << "\n";
    return !args.empty();
  };
  if (*html && !expand(html_opt.traces, "html")) return 1;
  if (*sym && !expand(sym_paths, "symbolize")) return 1;
  if (*base && !expand(base_paths, "baseline")) return 2;
  if (*exp && !expand(export_opt.paths, "export")) return 1;
  try {
    check_opt.allow_incomplete = allow_incomplete;
    if (*chk) return run_check(check_opt);
    if (*base) return run_baseline(base_paths, base_out, allow_incomplete);
    if (*dif) return run_diff(diff_old, diff_new, diff_json, allow_incomplete);
    if (*report) return cmd_report(report_paths, report_json, size_t(top), size_t(frames), rank_tolerance);
    if (*html) {
      html_opt.top = size_t(html_top);
      html_opt.frames = size_t(html_frames);
      return cmd_html(html_opt);
    }
    if (*live) return cmd_live(live_path, live_at, live_json);
    if (*idx) return cmd_index(index_path, index_out, uint64_t(index_every));
    if (*sym) return cmd_symbolize(sym_paths);
    if (*dmp) return cmd_dump(dump_path);
    if (*exp) {
      export_opt.at_given = exp->count("--at") > 0;
      return cmd_export(export_opt);
    }
  } catch (const std::exception& e) {
    std::cerr << "cumemtrace: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
