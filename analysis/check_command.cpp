#include "check_command.h"

#include <fstream>
#include <iostream>
#include <variant>

#include "baseline_command.h"
#include "junit.h"
#include "parallel.h"
#include "report.h"
#include "symbolize.h"

namespace cumemtrace {
namespace {

// GitHub's workflow-command escaping of a message (docs.github.com, "Workflow commands").
std::string github_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

}  // namespace

int run_check(const CheckOptions& opt) {
  if (opt.limits.empty() && opt.baseline.empty()) {
    std::cerr << "cumemtrace check: no limit given (--max-peak, --max-leaked, --max-failed, --max-single, "
                 "--max-gap-ratio, --baseline)\n";
    return 2;
  }
  std::vector<TraceCheck> checks;
  if (!opt.baseline.empty()) {
    std::string error;
    const auto tol = parse_tolerance(opt.tolerance, &error);
    const auto base = tol ? load_baseline(opt.baseline, &error) : std::nullopt;
    const auto now = base ? baseline_of_traces(opt.traces, &error) : std::nullopt;
    if (!now) {
      std::cerr << "cumemtrace check: " << (tol ? "" : "--tolerance: ") << error << "\n";
      return 2;
    }
    checks.push_back(check_against(*base, *now, *tol));
    checks.back().path = opt.baseline;
  }
  // Traces are read and checked in parallel; results and messages stay in the order given.
  const std::vector<std::string> limited = opt.limits.empty() ? std::vector<std::string>{} : opt.traces;
  auto checked = parallel_map(limited.size(), [&](size_t i) -> std::variant<TraceCheck, std::string> {
    const Trace t = read_trace(limited[i]);
    if (!t.header_ok) return "cumemtrace check: " + limited[i] + ": " + (t.error ? t.error->message : "unreadable");
    std::unordered_map<uint64_t, Symbol> symbols;
    if (t.symbols.empty()) symbols = resolve_symbols(t);
    ReportOptions ro;
    ro.extra_symbols = &symbols;
    ro.frames = 1;
    return check_trace(t, build_report(t, ro), opt.limits);
  });
  for (auto& c : checked) {
    if (auto* unreadable = std::get_if<std::string>(&c)) {
      std::cerr << *unreadable << "\n";
      return 2;
    }
    checks.push_back(std::move(std::get<TraceCheck>(c)));
  }
  bool ok = true;
  for (const auto& c : checks) {
    for (const auto& r : c.results) {
      if (r.ok) continue;
      ok = false;
      std::cout << "FAIL " << c.path << ": " << r.name << ": " << r.message << "\n";
      if (opt.github) std::cout << "::error title=cumemtrace " << r.name << "::" << github_escape(r.message) << "\n";
    }
  }
  if (!opt.junit.empty()) {
    std::ofstream out(opt.junit);
    write_junit(out, checks);
    if (!out) {
      std::cerr << "cumemtrace check: cannot write " << opt.junit << "\n";
      return 2;
    }
  }
  size_t n = 0;
  for (const auto& c : checks) n += c.results.size();
  std::cerr << "cumemtrace check: " << (ok ? "all " : "") << n << " limit checks"
            << (ok ? " hold" : ", some failed") << "\n";
  return ok ? 0 : 1;
}

}  // namespace cumemtrace
