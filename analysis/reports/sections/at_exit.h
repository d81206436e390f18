// What was live at the end of the trace, split into what is held by design and possible leaks.
#pragma once

#include "reports/report.h"

namespace cumemtrace {

// Live at the end, split: device memory a caching allocator (allocator_map.h) holds is
// "held by its cache at exit", and memory a library's handles keep (cuBLAS's workspaces:
// library_handle_owner) "held by its handles at exit", unless growth classifies its call
// site `leak`; everything else live is a possible leak. Groups by kind (leaks) or allocator (cache), then call site;
// each device's two sums go to its DeviceReport.
// Read from the replay at the end one allocation at a time: a copy of the set there (and
// one more per group) was the largest part of a report's memory after the replays' maps.
void split_at_exit(const Replayer& end, Report& rep, const Stacks& stacks, const ReportOptions& opt,
                   const CallerNames& names);

}  // namespace cumemtrace
