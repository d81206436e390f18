#include "reports/timeline/site_bands.h"

#include <algorithm>

#include "reports/allocation_events.h"

namespace cumemtrace {

SiteBands::SiteBands(const Report& rep, const Stacks& stacks) : users_(stacks) {
  for (const DeviceReport& d : rep.devices) {
    if (d.device < 0) continue;
    auto& bands = bands_[d.device];
    for (const SiteRow& r : d.top_sites) {
      if (bands.size() == kBands) break;
      // The report's rows are per kind too: one band per site.
      if (std::any_of(bands.begin(), bands.end(),
                      [&](const Band& b) { return b.node == r.node && b.python_stack == r.python_stack; }))
        continue;
      bands.push_back(Band{r.node, r.python_stack, &r});
    }
    live_[d.device] = {};
  }
}

int SiteBands::band_of(const Event& e) {
  // A band is one device's: the same stacks may be a band on one device and other's on the next.
  const auto key = std::tuple(e.device, e.stack_id, e.python_stack_id);
  auto memo = band_of_stacks_.find(key);
  if (memo != band_of_stacks_.end()) return memo->second;
  int band = -1;
  if (const auto it = bands_.find(e.device); it != bands_.end()) {
    const uint32_t node = users_.of(e.stack_id, e.python_stack_id).node;
    for (size_t i = 0; i < it->second.size(); ++i)
      if (it->second[i].node == node && it->second[i].python_stack == e.python_stack_id) band = int(i);
  }
  return band_of_stacks_.emplace(key, band).first->second;
}

void SiteBands::observe(const Event& e) {
  if (e.result != 0) return;
  if (allocates_device_memory(e) && e.address) {
    const int band = band_of(e);
    if (band < 0) return;
    live_[e.device][size_t(band)] += e.size;
    in_band_.insert_or_assign(e.address, InBand{e.device, uint32_t(band), e.size});
  } else if (e.op == format::Op::kFree) {
    const InBand* in = in_band_.find(e.address);
    if (!in) return;
    uint64_t& live = live_[in->device][in->band];
    live -= std::min(live, in->bytes);
    in_band_.erase(e.address);
  }
}

SiteBands::Values SiteBands::values(int32_t device, uint64_t tracked) const {
  Values v{};
  if (const auto it = live_.find(device); it != live_.end()) v = it->second;
  uint64_t sum = 0;
  for (size_t i = 0; i < kBands; ++i) sum += v[i];
  v[kBands] = tracked > sum ? tracked - sum : 0;
  return v;
}

size_t SiteBands::bands(int32_t device) const {
  const auto it = bands_.find(device);
  return it == bands_.end() ? 0 : it->second.size();
}

std::vector<const SiteRow*> SiteBands::rows(int32_t device) const {
  std::vector<const SiteRow*> out;
  if (const auto it = bands_.find(device); it != bands_.end())
    for (const Band& b : it->second) out.push_back(b.row);
  return out;
}

}  // namespace cumemtrace
