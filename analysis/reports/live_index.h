// `live --at` answered from a checkpoint index (checkpoint.h) instead of a whole replay.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "replay/checkpoint.h"
#include "reports/report.h"

namespace cumemtrace {

// build_live's answers for `ats` (any order, repeats allowed), in the order given: for each
// moment, the state at the last checkpoint before it and the trace's events from there to
// it. Moments that start from the same checkpoint share one read and one replay. `bytes`:
// the trace at `path`, of which `index` was loaded; `meta`: index.meta with its path set.
// Nullopt, with `why`, when the index or the trace after a checkpoint reads as damaged.
std::optional<std::vector<LiveReport>> build_live_indexed(const std::string& path, std::span<const uint8_t> bytes,
                                                          const TraceIndex& index, const Trace& meta,
                                                          const std::vector<uint64_t>& ats, std::string& why);

}  // namespace cumemtrace
