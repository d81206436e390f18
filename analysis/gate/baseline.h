// A memory baseline: what a run's traces showed, reduced to figures that survive a
// rebuild and ASLR, so a later run can be compared with it (`cumemtrace baseline`,
// `check --baseline`, `diff`). Call sites are keyed by the call-site frame as a person
// names it — module basename, function, file:line — never by an address; a frame without
// a symbol is keyed by its module and its offset in it.
//
// Several traces (the processes of one job): per device ordinal the peaks' maximum, and
// the sums of leaked bytes and failed allocations; per call site and device, sums.
//
// The file (docs/cli.md, "baseline"): {"format": "cumemtrace-baseline", "version": 1,
// "devices": {"0": {"peak", "leaked", "failed"}}, "call_sites": [{"key", "device",
// "bytes_at_peak", "leaked"}]}, bytes as integers.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/report.h"

namespace cumemtrace {

struct Baseline {
  struct Device {
    uint64_t peak = 0, leaked = 0, failed = 0;  // leaked: possible leaks, caches' bytes at exit apart
    uint64_t held_by_cache = 0;                 // held by caching allocators at exit (0 in older baselines)
  };
  struct Site {
    uint64_t bytes_at_peak = 0, leaked = 0;
  };
  std::map<int32_t, Device> devices;
  std::map<std::pair<std::string, int32_t>, Site> sites;  // (key, device)
};

// The key of a call-site row: "python FILE:FUNCTION:LINE" of the Python frame the call-site
// rule names it by (call_site_rule.h: the user's), else its first native frame (which must
// be symbolized for a stable key); then the caller that tells it from rows of the same frame
// (" <- keep_history train.cpp:20"); utf8_escaped (escape.h), as a baseline file holds it.
std::string site_key(const SiteRow& row);

// From reports built with every call site (ReportOptions::top = SIZE_MAX, frames >= 1).
Baseline baseline_of(const std::vector<Report>& reports);

nlohmann::ordered_json to_json(const Baseline& b);
std::optional<Baseline> baseline_from_json(const nlohmann::json& j, std::string* error);

struct SiteChange {
  enum class Kind { kNew, kGone, kGrew, kShrank };
  Kind kind{};
  std::string key;
  int32_t device = -1;
  Baseline::Site before, after;
  // The larger of the two changes (bytes at the peak, leaked), with its sign.
  int64_t change() const {
    const int64_t peak = int64_t(after.bytes_at_peak) - int64_t(before.bytes_at_peak);
    const int64_t leak = int64_t(after.leaked) - int64_t(before.leaked);
    return std::llabs(peak) >= std::llabs(leak) ? peak : leak;
  }
};
std::string_view change_name(SiteChange::Kind k);

// Call sites whose bytes at the peak or leaked bytes differ, largest change first.
std::vector<SiteChange> diff_sites(const Baseline& before, const Baseline& after);

}  // namespace cumemtrace
