#include "reports/live_index.h"

#include <algorithm>

#include "base/progress.h"

namespace cumemtrace {

std::optional<std::vector<LiveReport>> build_live_indexed(const std::string& path, std::span<const uint8_t> bytes,
                                                          const TraceIndex& index, const Trace& meta,
                                                          const std::vector<uint64_t>& ats, std::string& why) {
  const Stacks stacks(meta);
  std::vector<size_t> order(ats.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ats[a] < ats[b]; });
  std::vector<LiveReport> out(ats.size());
  for (size_t k = 0; k < order.size();) {
    const Checkpoint& c = checkpoint_for(index, ats[order[k]]);
    size_t end = k;
    while (end < order.size() && &checkpoint_for(index, ats[order[end]]) == &c) ++end;
    std::optional<Replayer> r = restore_checkpoint(index, c, why);
    if (!r) return std::nullopt;
    const Trace tail = parse_trace_from(bytes, path, c.byte_offset, ats[order[end - 1]]);
    if (!tail.header_ok || !tail.damage.empty()) {
      why = "the trace does not read as when it was indexed" +
            (tail.damage.empty() ? std::string() : ": " + tail.damage.front().message);
      return std::nullopt;
    }
    size_t next = 0;
    for (; k < end; ++k) {
      const uint64_t at = ats[order[k]];
      for (; next < tail.events.size() && tail.events[next].time_ns <= at; ++next) {
        if ((next & 0xfff) == 0) progress("replaying", next, tail.events.size());
        r->apply(tail.events[next], c.events_before + next);
      }
      out[order[k]] = live_report(meta, stacks, *r, at, c.events_before + next);
    }
  }
  return out;
}

}  // namespace cumemtrace
