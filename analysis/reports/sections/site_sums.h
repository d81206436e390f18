// The report's call-site and library rows (report.h's SiteRow, LibraryRow), summed from live
// allocations fed one at a time, so that a live set need not be copied to be grouped.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "reports/report.h"

namespace cumemtrace {

// Groups allocations by (call site, Python stack, kind, device); sorted by bytes, largest
// first. Two lines of one Python function reach the allocator through the same native
// frames: only their Python stacks tell them apart.
class SiteSums {
 public:
  explicit SiteSums(const Stacks& stacks) : stacks_(&stacks), users_(stacks) {}
  void add(const LiveAlloc& a);
  std::vector<SiteRow> rows() &&;

 private:
  const Stacks* stacks_;
  UserSites users_;
  std::map<std::tuple<uint32_t, uint32_t, int, int32_t>, SiteRow> rows_;
};

std::vector<SiteRow> group_sites(const std::vector<LiveAlloc>& allocs, const Stacks& stacks);

// Keeps the first `top` rows, symbolizes them; returns how many were dropped.
uint64_t keep_top(std::vector<SiteRow>& rows, const Stacks& stacks, const ReportOptions& opt, const CallerNames& names);

// Device memory by the library of its call site, sorted by bytes, largest first.
class LibrarySums {
 public:
  explicit LibrarySums(const Stacks& stacks) : stacks_(&stacks) {}
  void add(const LiveAlloc& a);
  std::vector<LibraryRow> rows() &&;

 private:
  const Stacks* stacks_;
  std::map<std::string, LibraryRow> rows_;
};

std::vector<LibraryRow> group_libraries(const std::vector<LiveAlloc>& allocs, const Stacks& stacks);

}  // namespace cumemtrace
