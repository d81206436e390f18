#include "reports/sections/first_pass.h"

#include <algorithm>

namespace cumemtrace {

using format::Kind;
using format::Op;

void FirstPass::observe(const Event& e) {
  const size_t k = kept++;
  if (ranges) ranges->advance(e.time_ns, final);
  final.apply(e, k);
  if (ranges) ranges->observe(e, final);
  if (functions) functions->observe(e);
  last_kept_ns = e.time_ns;
  earliest_ns = std::min(earliest_ns, e.time_ns);
  latest_ns = std::max(latest_ns, e.time_ns);
  growth.observe(e, k);
  graph_calls.observe(e);
  failed_frees.observe(e);
  ipc.observe(e);
  if (e.op == Op::kAlloc || e.op == Op::kFree) {
    // Calls by the API the program used, so a user can check each allocation was seen
    // once. Counted by API id, named once per id after (naming each event was most of the time).
    ApiCounts& c = by_api_id[{e.device, e.api}];
    if (e.flags & format::kEventRestored) --c.frees;       // that free failed
    else if (e.op == Op::kFree) c.frees += e.result == 0;  // a refused free freed nothing
    else if (e.result != 0) ++c.failed;
    else ++c.allocs;
    // A stream-ordered pool is the driver's, whose every allocation is traced: no cache hides it.
    if (e.op == Op::kAlloc && e.result == 0 && format::holds_device_memory(e.kind) && e.kind != Kind::kAsyncPool)
      if (const std::string& cache = owners.of(e.stack_id); !cache.empty()) caches.insert(cache);
    if (e.op == Op::kAlloc || e.result != 0)  // a failed free is a site too; no node made when known
      allocated_from.insert({e.stack_id, e.python_stack_id});
    if (e.op == Op::kAlloc && e.result == 0 && (e.flags & format::kEventCaptured))
      graph_nodes[e.device].push_back(LiveAlloc{e.address, e.size, e.handle, e.time_ns, e.stack_id, e.tid, e.device,
                                                e.api, e.kind, e.python_stack_id});
  } else if (e.op == Op::kContextCreate && e.result == 0) {
    contexts.push_back(e);
  }
}
void FirstPass::observe_block(const BlockEvent& b) {
  if (b.op == format::BlockOp::kAlloc) allocated_from.insert({b.stack_id, b.python_stack_id});
  growth.observe_block(b);
}

}  // namespace cumemtrace
