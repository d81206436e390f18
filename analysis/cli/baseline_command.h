// Baselines of traces for `cumemtrace baseline TRACE… -o FILE` and `cumemtrace diff OLD NEW`
// (diff_command.cpp), and the baseline comparison of `check --baseline FILE --tolerance T`
// (docs/cli.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gate/baseline.h"
#include "gate/check.h"

namespace cumemtrace {

// Traces whose figures are incomplete (completeness.h) among those read for a baseline.
struct Incomplete {
  bool allow = false;              // --allow-incomplete: go on, noting them
  bool found = false;              // one was met (refused unless `allow`)
  std::vector<std::string> notes;  // "TRACE: figures are incomplete (why)", one per trace
};

// Every call site of every trace, symbolized (in memory when the trace has no symbols).
// A trace whose figures are incomplete is an error (`incomplete->found`) unless
// `incomplete->allow`; without `incomplete` it is always an error.
std::optional<Baseline> baseline_of_traces(const std::vector<std::string>& paths, std::string* error,
                                           Incomplete* incomplete = nullptr);
// A baseline file, or a trace (then its baseline).
std::optional<Baseline> load_baseline(const std::string& path, std::string* error, Incomplete* incomplete = nullptr);

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
