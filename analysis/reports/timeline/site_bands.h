// Live bytes by call site over time, for the page's stacked timeline (as memory_viz's
// active memory timeline): on each device, the report's top call sites at its peak (at
// most kBands, keyed as the report groups them: the user's frame by the call-site rule and
// the Python stack) each get a band, and "other" is the device's tracked bytes less theirs,
// so that the bands of a moment always sum to its tracked bytes. How a band is named is the
// page's (render/page/html_data.cpp): each band keeps the report's row it stands for.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "cumemtrace/rules/address_map.h"
#include "read/reader.h"
#include "reports/report.h"
#include "stacks/call_site_rule.h"
#include "stacks/stacks.h"

namespace cumemtrace {

class SiteBands {
 public:
  static constexpr size_t kBands = 8;
  using Values = std::array<uint64_t, kBands + 1>;  // each band's live bytes, then other's

  SiteBands(const Report& rep, const Stacks& stacks);
  // Every event, in file order: an allocation of a band's site adds to it, a free of one
  // takes it off (by its address; the bytes a teardown or unmap frees are other's).
  void observe(const Event& e);
  // Device `device`'s bands now, with other = `tracked` less the bands (never below 0).
  Values values(int32_t device, uint64_t tracked) const;
  // The report's rows of device `device`'s bands, in band order (they live as long as the report).
  std::vector<const SiteRow*> rows(int32_t device) const;
  size_t bands(int32_t device) const;

 private:
  struct Band {
    uint32_t node, python_stack;
    const SiteRow* row;
  };
  int band_of(const Event& e);

  UserSites users_;
  std::map<int32_t, std::vector<Band>> bands_;
  std::map<int32_t, Values> live_;
  std::map<std::tuple<int32_t, uint32_t, uint32_t>, int> band_of_stacks_;  // (device, stack, Python stack) -> band
  struct InBand {
    int32_t device;
    uint32_t band;
    uint64_t bytes;
  };
  // address -> its band: a flat table, not a heap node per allocation (a node each was a
  // twentieth of `html` with 100 k allocations live: docs/performance.md, "`html`: one
  // replay, and the page's data never copied").
  AddressMap<InBand> in_band_;
};

}  // namespace cumemtrace
