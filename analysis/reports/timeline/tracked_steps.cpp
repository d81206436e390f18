#include "reports/timeline/tracked_steps.h"

#include <map>

#include "replay/replay.h"

namespace cumemtrace {

void tracked_steps(const EventSource& events, uint64_t granule, const std::function<void(const TrackedStep&)>& step) {
  Replayer r(granule);
  std::map<int32_t, uint64_t> shown;  // device -> tracked bytes of its last step
  events.scan([&](const Event& e, size_t i) {
    r.apply(e, i);
    if (e.device < 0) return;
    TrackedStep s{e};
    s.failed = e.op == format::Op::kAlloc && e.result != 0;
    if (auto it = r.devices().find(e.device); it != r.devices().end()) {
      s.tracked = it->second.device_bytes;
      auto [last, fresh] = shown.try_emplace(e.device, s.tracked);
      s.changed = fresh || last->second != s.tracked;
      last->second = s.tracked;
    }
    if (s.failed || s.changed) step(s);
  });
}

}  // namespace cumemtrace
