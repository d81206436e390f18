// build_report's compute steps after its two passes, one row each (steps.cpp): a section
// whose figures come from the first pass's scans (first_pass.h), each device's live set at
// its peak (at_peak), the replay at the end or the sections before it, in the order they
// read each other. The text and JSON writers of
// each section are rows of render/report/sections.h's table, under the same name.
#pragma once

#include <string_view>
#include <vector>

#include "reports/report.h"
#include "reports/sections/first_pass.h"

namespace cumemtrace {

// What a step reads besides the report it fills.
struct ReportInputs {
  const Trace& trace;
  const EventSource& events;
  const ReportOptions& opt;
  const Stacks& stacks;
  FirstPass& pass;           // its scans are finished by their steps
  const CallerNames& names;  // call_site_rule.h: a site is named alike in every table
  const Replayer& end;       // the second pass's replay, at the end
  uint64_t last_ns = 0;      // the trace's last moment
};

struct ReportStep {
  std::string_view name;
  void (*compute)(ReportInputs& in, Report& rep);
  // Null, or shown each allocation live at a device's peak (another process's memory mapped
  // here left out, as for the peak's sites) while the second pass stands there, before any
  // step runs: what a section reads of the peak's live set, kept as it goes, not copied.
  void (*at_peak)(const LiveAlloc& a, Report& rep) = nullptr;
};

// Every step, in the order build_report runs them.
const std::vector<ReportStep>& report_steps();

}  // namespace cumemtrace
