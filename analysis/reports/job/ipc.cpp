#include "reports/job/ipc.h"

#include <algorithm>

namespace cumemtrace {

using format::Kind;
using format::Op;

void IpcScan::observe(const Event& e) {
  if (e.result != 0 || !e.address || (e.flags & format::kEventUnknownAddress)) return;
  if (e.op == Op::kShare && (e.flags & format::kEventIpcId)) {
    std::vector<size_t>& at = live_exports_[e.address];
    // The same allocation exported again gives the same handle: one export.
    if (std::any_of(at.begin(), at.end(), [&](size_t i) { return ipc_.exports[i].id == e.handle; })) return;
    at.push_back(ipc_.exports.size());
    ipc_.exports.push_back({e.handle, e.device, e.address, e.size, e.time_ns, false, false});
  } else if (e.op == Op::kAlloc && e.kind == Kind::kIpcImport) {
    const bool id = e.flags & format::kEventIpcId;
    open_imports_[e.address] = ipc_.imports.size();
    ipc_.imports.push_back(
        {id ? e.handle : 0, id ? 0 : uint32_t(e.handle), e.device, e.address, e.size, e.time_ns, false});
  } else if (e.op == Op::kFree) {
    // An import is closed at its mapped address; an exported allocation freed at its own.
    if (!open_imports_.erase(e.address)) live_exports_.erase(e.address);
  }
}

Ipc IpcScan::finish() && {
  for (const auto& [address, at] : live_exports_)
    for (size_t i : at) ipc_.exports[i].live_at_end = true;
  ipc_.live_at_end = std::move(live_exports_);
  for (const auto& [address, i] : open_imports_) ipc_.imports[i].open_at_end = true;
  return std::move(ipc_);
}

void Ipc::counted_at_end(const LiveAlloc& a, const std::string& cache, uint32_t site_node) {
  const auto at = live_at_end.find(a.address);
  if (at == live_at_end.end()) return;
  for (size_t i : at->second) {
    IpcExport& x = exports[i];
    x.held_by_cache = !cache.empty(), x.cache = cache, x.kind = a.kind;
    x.site_node = site_node, x.python_stack = a.python_stack_id;
  }
}

}  // namespace cumemtrace
