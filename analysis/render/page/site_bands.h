// The names of the page's call-site bands (reports/timeline/site_bands.h says what a band
// holds): each band's short label, library and frames, as the page's legend shows them.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "reports/timeline/site_bands.h"

namespace cumemtrace {

// [{label, library, frames: [text]}] for device `device`'s bands, in band order.
nlohmann::ordered_json band_sites_json(const SiteBands& bands, int32_t device);

}  // namespace cumemtrace
