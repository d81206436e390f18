// The failed allocations of a report: identical ones (device, size, kind, API, result,
// call site) grouped with a count — PyTorch retries a failed cudaMalloc after freeing its
// cache, reaching it from another line of its caller, so the site is the one call-site
// rule's (call_site_rule.h: the user's part of the stack, past the allocator's frames),
// not the whole path — at most --top groups. Linear in the
// number of failures (a job that retries in a loop fails hundreds of thousands of times):
// one map lookup per failure.
#pragma once

#include <vector>

#include "reports/report.h"

namespace cumemtrace {

// `firsts[k]`: index into `failed` of row k's first failure; `row_of[i]`: the row failure
// i went into, kNoEvent when its group was beyond --top.
std::vector<FailedRow> failed_rows(const Trace& trace, const std::vector<FailedAlloc>& failed, const Stacks& stacks,
                                   const ReportOptions& opt, uint64_t& total, uint64_t& omitted,
                                   std::vector<size_t>& firsts, std::vector<size_t>& row_of);

}  // namespace cumemtrace
