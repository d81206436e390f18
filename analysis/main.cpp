// The `cumemtrace` command line: run, report, live, symbolize, dump. docs/cli.md is the
// user's description; keep the two in step.
#include <CLI/CLI.hpp>

#include <charconv>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string_view>
#include <vector>

#include "dump.h"
#include "escape.h"
#include "live_time.h"
#include "report.h"
#include "report_json.h"
#include "report_text.h"
#include "run_command.h"
#include "symbolize.h"

using namespace cumemtrace;

namespace {

// Says on stderr what is wrong with a trace. Returns false when nothing was readable.
bool check(const Trace& t) {
  if (!t.header_ok) {
    std::cerr << "cumemtrace: " << printable(t.path) << ": " << (t.error ? t.error->message : "unreadable") << "\n";
    return false;
  }
  for (const auto& d : t.damage) std::cerr << "cumemtrace: " << printable(t.path) << ": " << d.message << "\n";
  if (!t.damage.empty())
    std::cerr << "warning: " << t.damage.size() << " damaged or unread byte range(s), the first at byte "
              << t.damage.front().byte_offset << "; figures from this trace are incomplete\n";
  return true;
}

int cmd_report(const std::vector<std::string>& paths, bool json, size_t top, size_t frames) {
  int rc = 0;
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  bool first = true;
  for (const auto& path : paths) {
    Trace t = read_trace(path);
    if (!check(t)) {
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
    if (paths.size() > 1) std::cout << all.dump(2) << "\n";
    else if (!all.empty()) std::cout << all[0].dump(2) << "\n";
  }
  return rc;
}

int cmd_live(const std::string& path, const std::vector<std::string>& at_args, bool json) {
  std::vector<std::string> parts;
  for (const auto& a : at_args) {
    if (a.empty()) parts.push_back(a);  // an error, said below
    std::stringstream ss(a);
    for (std::string part; std::getline(ss, part, ',');) parts.push_back(part);
    if (!a.empty() && a.back() == ',') parts.emplace_back();
  }
  Trace t = read_trace(path);
  if (!check(t)) return 1;
  std::vector<uint64_t> ats;
  for (const auto& part : parts) {
    std::string error;
    auto at = parse_moment(part, t, error);
    if (!at) {
      std::cerr << "cumemtrace live: " << error << "\n";
      return 2;
    }
    ats.push_back(*at);
  }
  const uint64_t start = t.process ? t.process->start_monotonic_ns : 0;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (uint64_t at : ats) {
    LiveReport lr = build_live(t, at);
    if (json) out.push_back(to_json(lr));
    else write_live_text(std::cout, lr, start);
  }
  if (json) std::cout << out.dump(2) << "\n";
  return 0;
}

int cmd_symbolize(const std::vector<std::string>& paths) {
  int rc = 0;
  for (const auto& path : paths) {
    SymbolizeFileResult r = symbolize_file(path);
    if (!r.ok) {
      std::cerr << "cumemtrace: " << path << ": " << r.message << "\n";
      rc = 1;
    } else if (r.already) {
      std::cerr << "cumemtrace: " << path << ": already symbolized\n";
    } else {
      std::cerr << "cumemtrace: " << path << ": " << r.appended << " of " << r.stats.ips << " ips symbolized";
      if (r.stats.modules_missing) std::cerr << ", " << r.stats.modules_missing << " module files missing";
      if (r.stats.modules_mismatch) std::cerr << ", " << r.stats.modules_mismatch << " modules with another build-id";
      if (r.cut_partial) std::cerr << "; partial last record cut off";
      std::cerr << "\n";
    }
  }
  return rc;
}

int cmd_dump(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "cumemtrace: cannot read " << path << "\n";
    return 1;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  dump(std::cout, bytes);
  return 0;
}

constexpr const char* kRunUsage =
    "usage: cumemtrace run [-o|--output PATTERN] [--depth N] [--] CMD ARGS...\n"
    "Runs CMD with libcumemtrace.so preloaded, then symbolizes the traces it wrote.\n"
    "Exits with CMD's status (128+signal if a signal killed it).\n";

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
        std::cerr << kRunUsage;
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

}  // namespace

// CLI11 names the option in its message: "--top: a count (0 or more), not '-1'".
const CLI::Validator kCount(
    [](std::string& v) {
      long long n = -1;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      return ec == std::errc() && p == v.data() + v.size() && n >= 0 ? std::string()
                                                                     : "a count (0 or more), not '" + v + "'";
    },
    "COUNT");

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "run") return parse_run(argc, argv);
  CLI::App app{"cumemtrace: who holds the CUDA device memory, where, and why an allocation failed"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("cumemtrace ") + CUMEMTRACE_VERSION);

  // `run` is parsed by hand (parse_run): the command's own options must pass through
  // untouched, and CLI11's prefix-command mode reorders them. This entry is for --help.
  app.add_subcommand("run", "Run a command with CUDA memory tracing, then symbolize its traces")
      ->footer("usage: cumemtrace run [-o PATTERN] [--depth N] [--] CMD ARGS...");

  std::vector<std::string> report_paths;
  bool report_json = false;
  long long top = 10, frames = 6;
  auto* report = app.add_subcommand("report", "Report on one or more traces");
  report->add_option("traces", report_paths, "Trace files")->required();
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

  std::vector<std::string> sym_paths;
  auto* sym = app.add_subcommand("symbolize", "Append symbols to traces (needs the modules' files)");
  sym->add_option("traces", sym_paths, "Trace files")->required();

  std::string dump_path;
  auto* dmp = app.add_subcommand("dump", "One line per record (debugging; unstable format)");
  dmp->add_option("trace", dump_path, "Trace file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end the same way; CLI11 gives them 0, every real usage
    // error its own code above 100. docs/cli.md promises 2 for all usage errors.
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    if (*report) return cmd_report(report_paths, report_json, size_t(top), size_t(frames));
    if (*live) return cmd_live(live_path, live_at, live_json);
    if (*sym) return cmd_symbolize(sym_paths);
    if (*dmp) return cmd_dump(dump_path);
  } catch (const std::exception& e) {
    std::cerr << "cumemtrace: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
