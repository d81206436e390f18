#include "report_failures.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace cumemtrace {
namespace {

using format::SnapshotReason;

// Per device, its snapshots in time order; the ones taken after failed allocations apart.
class SnapshotIndex {
 public:
  explicit SnapshotIndex(const Trace& t) {
    for (const auto& s : t.snapshots)
      for (const auto& d : s.devices) {
        all_[d.device].push_back({s.time_ns, &s, &d});
        if (s.reason == SnapshotReason::kFailedAllocation) after_failure_[d.device].push_back({s.time_ns, &s, &d});
      }
    for (auto* m : {&all_, &after_failure_})
      for (auto& [dev, v] : *m) std::stable_sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.time < b.time; });
  }

  // The snapshot taken right after a failed allocation at `time`, else the nearest one.
  std::pair<const Snapshot*, const DeviceSnapshot*> for_failure(int32_t device, uint64_t time) const {
    if (auto it = after_failure_.find(device); it != after_failure_.end()) {
      auto e = std::lower_bound(it->second.begin(), it->second.end(), time, by_time);
      if (e != it->second.end()) return {e->snap, e->dev};
    }
    auto it = all_.find(device);
    if (it == all_.end() || it->second.empty()) return {nullptr, nullptr};
    const auto& v = it->second;
    auto e = std::lower_bound(v.begin(), v.end(), time, by_time);
    if (e == v.end())
      --e;
    else if (e != v.begin() && time - std::prev(e)->time <= e->time - time)
      --e;
    return {e->snap, e->dev};
  }

 private:
  struct Entry {
    uint64_t time;
    const Snapshot* snap;
    const DeviceSnapshot* dev;
  };
  static bool by_time(const Entry& e, uint64_t t) { return e.time < t; }
  std::map<int32_t, std::vector<Entry>> all_, after_failure_;
};

}  // namespace

std::vector<FailedRow> failed_rows(const Trace& trace, const std::vector<FailedAlloc>& failed, const Stacks& stacks,
                                   const ReportOptions& opt, uint64_t& total, uint64_t& omitted) {
  using Key = std::tuple<int32_t, uint64_t, int, uint16_t, int32_t, bool, uint32_t>;
  std::map<Key, size_t> group_of;
  std::vector<FailedRow> rows;
  std::vector<uint32_t> nodes;
  total = failed.size();
  for (const auto& f : failed) {
    const Event& e = f.event;
    const bool runtime = e.flags & format::kEventRuntimeLayer;
    const CallSite cs = stacks.call_site(e.stack_id);
    const Key key{e.device, e.size, int(e.kind), e.api, e.result, runtime, cs.node};
    auto [it, fresh] = group_of.try_emplace(key, rows.size());
    if (!fresh) {
      FailedRow& row = rows[it->second];
      ++row.count;
      row.last_time_ns = e.time_ns;
      continue;
    }
    FailedRow row;
    row.time_ns = row.last_time_ns = e.time_ns;
    row.device = e.device;
    row.size = e.size;
    row.kind = e.kind;
    row.api = trace.api_name(e.api);
    row.result = e.result;
    row.runtime_layer = runtime;
    row.tid = e.tid;
    row.library = cs.library;
    row.live_device_bytes = f.live_device_bytes;
    rows.push_back(std::move(row));
    nodes.push_back(cs.node);
  }
  omitted = rows.size() > opt.top ? rows.size() - opt.top : 0;
  rows.resize(rows.size() - omitted);

  const SnapshotIndex index(trace);
  for (size_t i = 0; i < rows.size(); ++i) {
    FailedRow& row = rows[i];
    row.frames = stacks.frames(nodes[i], opt.frames);
    if (auto [s, d] = index.for_failure(row.device, row.time_ns); s) {
      row.snapshot_known = true;
      row.snapshot_time_ns = s->time_ns;
      row.snapshot_reason = s->reason;
      row.device_free = d->nvml_device_free;
      row.device_total = d->nvml_device_total;
      row.process_used = d->nvml_process_used;
    }
    if (row.device_total == format::kUnknown64)
      if (const DeviceInfo* info = trace.device(row.device)) row.device_total = info->total_bytes;
  }
  return rows;
}

}  // namespace cumemtrace
