#include "reports/sections/site_sums.h"

#include <algorithm>

#include "stacks/call_site_rule.h"
#include "stacks/python_stacks.h"

namespace cumemtrace {
namespace {

constexpr auto by_bytes_desc = [](const auto& a, const auto& b) {
  return std::tie(b.bytes, b.count) < std::tie(a.bytes, a.count);
};

}  // namespace

void SiteSums::add(const LiveAlloc& a) {
  CallSite cs = stacks_->call_site(a.stack_id);
  // Native frames from the user's (call_site_rule.h): past framework dispatch too, unless
  // a Python frame of the user's names the site: then from the allocator's caller.
  const uint32_t node = users_.of(a.stack_id, a.python_stack_id).node;
  auto& r = rows_[{node, a.python_stack_id, int(a.kind), a.device}];
  r.node = node;
  r.python_stack = a.python_stack_id;
  r.library = cs.library;
  r.device = a.device;
  r.kind = a.kind;
  r.bytes += a.size;
  r.count += 1;
  r.threads.insert(a.tid);
}

std::vector<SiteRow> SiteSums::rows() && {
  std::vector<SiteRow> out;
  for (auto& [k, r] : rows_) out.push_back(std::move(r));
  std::sort(out.begin(), out.end(), by_bytes_desc);
  return out;
}

std::vector<SiteRow> group_sites(const std::vector<LiveAlloc>& allocs, const Stacks& stacks) {
  SiteSums sums(stacks);
  for (const auto& a : allocs) sums.add(a);
  return std::move(sums).rows();
}

uint64_t keep_top(std::vector<SiteRow>& rows, const Stacks& stacks, const ReportOptions& opt,
                  const CallerNames& names) {
  uint64_t omitted = rows.size() > opt.top ? rows.size() - opt.top : 0;
  if (omitted) rows.resize(opt.top);
  for (auto& r : rows) {
    r.frames = stacks.frames(r.node, opt.frames);
    r.python_frames = python_frames(stacks.trace(), r.python_stack);
    r.caller = names.of(r.node, r.python_stack);
    if (!r.python_frames.empty()) r.merged_frames = merge_stacks(stacks.frames(r.node, SIZE_MAX), r.python_frames);
  }
  return omitted;
}

void LibrarySums::add(const LiveAlloc& a) {
  if (!format::holds_device_memory(a.kind)) return;
  auto& r = rows_[stacks_->call_site(a.stack_id).library];
  r.bytes += a.size;
  r.count += 1;
  r.bytes_by_kind[int(a.kind)] += a.size;
}

std::vector<LibraryRow> LibrarySums::rows() && {
  std::vector<LibraryRow> out;
  for (auto& [lib, r] : rows_) {
    r.library = lib;
    out.push_back(r);
  }
  std::sort(out.begin(), out.end(), by_bytes_desc);
  return out;
}

std::vector<LibraryRow> group_libraries(const std::vector<LiveAlloc>& allocs, const Stacks& stacks) {
  LibrarySums sums(stacks);
  for (const auto& a : allocs) sums.add(a);
  return std::move(sums).rows();
}

}  // namespace cumemtrace
