#include "reports/report_failures.h"

#include <map>

#include "stacks/call_site_rule.h"
#include "stacks/python_stacks.h"
#include <tuple>

namespace cumemtrace {

std::vector<FailedRow> failed_rows(const Trace& trace, const std::vector<FailedAlloc>& failed, const Stacks& stacks,
                                   const ReportOptions& opt, uint64_t& total, uint64_t& omitted,
                                   std::vector<size_t>& firsts, std::vector<size_t>& row_of) {
  using Key = std::tuple<int32_t, uint64_t, int, uint16_t, int32_t, bool, uint64_t, uint32_t, bool>;
  std::map<Key, size_t> group_of;
  std::vector<FailedRow> rows;
  std::vector<uint32_t> nodes, python_stacks;
  const UserSites users(stacks);
  firsts.clear();
  row_of.clear();
  total = failed.size();
  for (size_t i = 0; i < failed.size(); ++i) {
    const Event& e = failed[i].event;
    const bool runtime = e.flags & format::kEventRuntimeLayer;
    const CallSite cs = stacks.call_site(e.stack_id);
    const UserSite us = users.of(e.stack_id, e.python_stack_id);
    const bool recovered = failed[i].recovered_after_ns.has_value();
    const Key key{e.device, e.size, int(e.kind), e.api, e.result, runtime, us.key, e.python_stack_id, recovered};
    auto [it, fresh] = group_of.try_emplace(key, rows.size());
    row_of.push_back(it->second);
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
    row.recovered = recovered;
    row.recovered_after_ns = recovered ? *failed[i].recovered_after_ns : 0;
    row.library = cs.library;
    row.key = us.key;
    row.live_device_bytes = failed[i].live_device_bytes;
    rows.push_back(std::move(row));
    nodes.push_back(us.node);
    python_stacks.push_back(e.python_stack_id);
    firsts.push_back(i);
  }
  omitted = rows.size() > opt.top ? rows.size() - opt.top : 0;
  rows.resize(rows.size() - omitted);
  firsts.resize(rows.size());
  for (auto& r : row_of)
    if (r >= rows.size()) r = kNoEvent;
  for (size_t i = 0; i < rows.size(); ++i) {
    FailedRow& row = rows[i];
    row.frames = stacks.frames(nodes[i], opt.frames);
    row.python_frames = python_frames(trace, python_stacks[i]);
    if (row.device_total == format::kUnknown64)
      if (const DeviceInfo* info = trace.device(row.device)) row.device_total = info->total_bytes;
  }
  return rows;
}

}  // namespace cumemtrace
