// The failed allocations of a report: identical ones (device, size, kind, API, result,
// call site) grouped with a count — PyTorch retries a failed cudaMalloc after freeing its
// cache, reaching it from another line of its caller, so the site is the one call-site
// rule's (call_site_rule.h: the user's part of the stack, past the allocator's frames),
// not the whole path — at most --top groups. Linear in the
// number of failures (a job that retries in a loop fails hundreds of thousands of times):
// one map lookup per failure.
#pragma once

#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "reports/report.h"
#include "stacks/call_site_rule.h"

namespace cumemtrace {

// `firsts[k]`: index into `failed` of row k's first failure; `row_of[i]`: the row failure
// i went into, kNoEvent when its group was beyond --top.
// The failed frees of a trace as the replay goes (FailedFreeRow): a free with a result, or
// the allocation put back after a free that failed (kEventRestored), which holds its size.
class FailedFrees {
 public:
  explicit FailedFrees(const Trace& trace, const Stacks& stacks) : trace_(&trace), stacks_(&stacks), users_(stacks) {}
  void observe(const Event& e);
  // The rows, at most --top, named (call_site_rule.h); total and omitted as failed_rows'.
  std::vector<FailedFreeRow> rows(const ReportOptions& opt, const CallerNames& names, uint64_t& total,
                                  uint64_t& omitted) &&;

 private:
  const Trace* trace_;
  const Stacks* stacks_;
  UserSites users_;
  std::vector<FailedFreeRow> rows_;
  std::vector<std::pair<uint32_t, uint32_t>> stacks_of_;  // per row: the first one's (node, Python stack)
  std::map<std::tuple<int32_t, int, uint16_t, int32_t, bool, uint64_t, uint32_t>, size_t> group_of_;
  uint64_t total_ = 0;
};

std::vector<FailedRow> failed_rows(const Trace& trace, const std::vector<FailedAlloc>& failed, const Stacks& stacks,
                                   const ReportOptions& opt, uint64_t& total, uint64_t& omitted,
                                   std::vector<size_t>& firsts, std::vector<size_t>& row_of);

}  // namespace cumemtrace
