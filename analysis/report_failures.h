// The failed allocations of a report: identical ones grouped with a count, at most
// --top groups, each with the NVML snapshot that saw it. Linear in the number of
// failures (a job that retries an allocation in a loop fails hundreds of thousands of
// times): one map lookup per failure, and a binary search for each group's snapshot.
#pragma once

#include <vector>

#include "report.h"

namespace cumemtrace {

std::vector<FailedRow> failed_rows(const Trace& trace, const std::vector<FailedAlloc>& failed, const Stacks& stacks,
                                   const ReportOptions& opt, uint64_t& total, uint64_t& omitted);

}  // namespace cumemtrace
