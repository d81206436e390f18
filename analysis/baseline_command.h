// `cumemtrace baseline TRACE… -o FILE` and `cumemtrace diff OLD NEW [--json]`, and the
// baseline comparison of `check --baseline FILE --tolerance T` (docs/cli.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "baseline.h"
#include "check.h"

namespace cumemtrace {

// Every call site of every trace, symbolized (in memory when the trace has no symbols).
std::optional<Baseline> baseline_of_traces(const std::vector<std::string>& paths, std::string* error);
// A baseline file, or a trace (then its baseline).
std::optional<Baseline> load_baseline(const std::string& path, std::string* error);

int run_baseline(const std::vector<std::string>& traces, const std::string& out);
int run_diff(const std::string& before, const std::string& after, bool json);

// check --baseline: peak and leaked per device may exceed the baseline's by `tolerance`
// (a percentage of the baseline figure, or bytes); a result per device and figure.
struct Tolerance {
  std::optional<double> percent;
  uint64_t bytes = 0;
  uint64_t of(uint64_t base) const { return percent ? uint64_t(*percent / 100.0 * double(base)) : bytes; }
};
std::optional<Tolerance> parse_tolerance(const std::string& text, std::string* error);
TraceCheck check_against(const Baseline& base, const Baseline& now, const Tolerance& tol);

}  // namespace cumemtrace
