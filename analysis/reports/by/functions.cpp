#include "reports/by/functions.h"

#include <algorithm>
#include <string_view>
#include <tuple>

#include "reports/allocation_events.h"
#include "stacks/call_site_rule.h"
#include "stacks/python_stacks.h"

namespace cumemtrace {
namespace {

// The C and C++ runtimes' frames every native stack passes through (a program's start, a
// thread's start): on every stack, so never the answer to "which of my functions".
bool is_runtime(const Frame& f) {
  const std::string_view m = f.module, fn = f.function;
  for (std::string_view lib :
       {"libc.so", "libc-", "ld-linux", "libpthread", "libstdc++", "libgcc_s", "libm.so", "libdl"})
    if (m.starts_with(lib)) return true;
  return fn == "_start";
}

// A native frame of the program's own: named, and not one no user acts on.
bool users_native(const Frame& f) {
  return !f.python && !f.function.empty() && !is_foreign_native(f) && !is_runtime(f);
}

}  // namespace

uint32_t FunctionScan::row_of(const std::string& name, bool python) {
  auto [it, fresh] = row_index_.try_emplace(name, uint32_t(rows_.size()));
  if (fresh) {
    rows_.push_back({name, python, 0, 0, 0, 0});
    live_.push_back(0);
  }
  return it->second;
}

const std::vector<uint32_t>& FunctionScan::functions_of(uint32_t stack_id, uint32_t python_stack_id) {
  auto [it, fresh] = functions_.try_emplace(uint64_t(stack_id) << 32 | python_stack_id);
  if (!fresh) return it->second;
  std::vector<uint32_t> rows;
  for (const Frame& f : python_frames(trace_, python_stack_id))
    if (is_user_python(f)) rows.push_back(row_of(basename_of(f.file) + ":" + f.function, true));
  const CallSite cs = stacks_.call_site(stack_id);
  if (cs.node)
    for (const Frame& f : stacks_.frames(cs.node, SIZE_MAX))
      if (users_native(f)) rows.push_back(row_of(f.module + ":" + elide_templates(f.function), false));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());  // recursion: once
  it->second = std::move(rows);
  return it->second;
}

void FunctionScan::observe(const Event& e) {
  if (allocates_device_memory(e)) {
    const std::vector<uint32_t>& rows = functions_of(e.stack_id, e.python_stack_id);
    if (rows.empty()) return;
    for (uint32_t r : rows) {
      FunctionRow& row = rows_[r];
      ++row.allocations;
      row.bytes_allocated += e.size;
      live_[r] += e.size;
      row.peak_bytes = std::max(row.peak_bytes, live_[r]);
    }
    if (const uint64_t k = allocation_key(e)) held_.insert_or_assign(k, {e.size, &rows});
  } else if (e.op == format::Op::kFree && e.result == 0) {
    const uint64_t k = allocation_key(e);
    const Held* h = k ? held_.find(k) : nullptr;
    if (!h) return;
    for (uint32_t r : *h->rows) live_[r] -= std::min(live_[r], h->bytes);
    held_.erase(k);
  }
}

std::vector<FunctionRow> FunctionScan::finish() {
  for (size_t r = 0; r < rows_.size(); ++r) rows_[r].held_after_bytes = live_[r];
  std::vector<FunctionRow> out = std::move(rows_);
  std::stable_sort(out.begin(), out.end(), [](const FunctionRow& a, const FunctionRow& b) {
    return std::tie(b.bytes_allocated, b.allocations) < std::tie(a.bytes_allocated, a.allocations);
  });
  return out;
}

}  // namespace cumemtrace
