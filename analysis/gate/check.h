// `cumemtrace check`: limits on what traces show, for CI (docs/cli.md). Evaluates limits
// against a Report; printing, JUnit and exit codes are check_command.cpp's and junit.h's.
// Each limit applies to every device of a trace, or to one with a `dN:` prefix; a limit
// holds when the measured figure is <= the limit (limits are inclusive).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "read/reader.h"
#include "reports/report.h"

namespace cumemtrace {

struct Limit {
  enum class What { kPeak, kLeaked, kFailed, kSingle, kGapRatio, kGrowth, kPoolGrowth };
  What what{};
  std::optional<int32_t> device;  // from "dN:"; all devices when absent
  uint64_t bytes = 0;             // kPeak, kLeaked, kSingle, kGrowth, kPoolGrowth; kFailed: a count
  std::optional<double> percent;  // kSingle given as a percentage of the device's total
  double ratio = 0;               // kGapRatio
  std::string text;               // as given
  bool count_recovered = false;   // kFailed: count failures recovered from too (--count-recovered)
};

// Parses the value of --max-peak/--max-leaked/--max-single (SIZE, or PCT for single),
// --max-failed (N) or --max-gap-ratio (R in [0, 1]), with an optional "dN:" prefix.
std::optional<Limit> parse_limit(Limit::What what, std::string_view arg, std::string* error);
std::string_view limit_name(Limit::What what);  // "max-peak", ...

struct LimitResult {
  std::string name;  // "max-peak d0"
  bool ok = true;
  std::string message;  // one line: what, limit, measured, and the top call sites
  // The "figures-complete" result (completeness.h): no limit was judged on this trace.
  bool incomplete = false;
  // The "judged" result: the trace measured nothing, no limit applied to it (no device).
  bool unjudged = false;
  // --allow-incomplete on a trace whose figures are incomplete: "on incomplete figures (why)".
  std::string note;
  // What the measure could not see (reports/cache/blocks.h: a cache whose inside is not in the
  // trace), said beside the verdict whether it held or not.
  std::string unseen;
};

struct TraceCheck {
  std::string path;
  std::vector<LimitResult> results;
  std::string incomplete;  // why its figures are incomplete (completeness.h); empty: complete
  bool ok() const;
};

// One result per (limit, device it applies to); the largest single allocation per device
// is read from the trace's events.
TraceCheck check_trace(const Trace& trace, const EventSource& events, const Report& rep,
                       const std::vector<Limit>& limits);

}  // namespace cumemtrace
