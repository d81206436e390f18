#include "reports/oom/report_failures.h"

#include <map>

#include "stacks/call_site_rule.h"
#include "stacks/python_stacks.h"
#include <tuple>

namespace cumemtrace {

void FailedFrees::observe(const Event& e) {
  const bool restored = e.flags & format::kEventRestored;
  const bool failed_free = (e.op == format::Op::kFree && e.result != 0) || (e.op == format::Op::kAlloc && restored);
  if (!failed_free) return;
  ++total_;
  const bool runtime = e.flags & format::kEventRuntimeLayer;
  const UserSite us = users_.of(e.stack_id, e.python_stack_id);
  const bool known = e.op == format::Op::kAlloc;  // the put-back allocation says what it was
  const int kind = known ? int(e.kind) : -1;
  auto [it, fresh] =
      group_of_.try_emplace({e.device, kind, e.api, e.result, runtime, us.key, e.python_stack_id}, rows_.size());
  if (!fresh) {
    FailedFreeRow& row = rows_[it->second];
    ++row.count;
    row.last_time_ns = e.time_ns;
    row.threads.insert(e.tid);
    return;
  }
  FailedFreeRow row;
  row.time_ns = row.last_time_ns = e.time_ns;
  row.device = e.device;
  row.kind = known ? e.kind : format::Kind::kUnknown;
  row.api = trace_->api_name(e.api);
  row.result = e.result;
  row.runtime_layer = runtime;
  row.address = e.address;
  row.size = known ? e.size : 0;
  row.threads.insert(e.tid);
  row.tid = e.tid;
  row.library = stacks_->call_site(e.stack_id).library;
  row.key = us.key;
  rows_.push_back(std::move(row));
  stacks_of_.emplace_back(us.node, e.python_stack_id);
}

std::vector<FailedFreeRow> FailedFrees::rows(const ReportOptions& opt, const CallerNames& names, uint64_t& total,
                                             uint64_t& omitted) && {
  total = total_;
  omitted = rows_.size() > opt.top ? rows_.size() - opt.top : 0;
  rows_.resize(rows_.size() - omitted);
  for (size_t i = 0; i < rows_.size(); ++i) {
    FailedFreeRow& row = rows_[i];
    row.frames = stacks_->frames(stacks_of_[i].first, opt.frames);
    row.python_frames = python_frames(*trace_, stacks_of_[i].second);
    row.caller = names.of_key(row.key);
  }
  return std::move(rows_);
}

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
