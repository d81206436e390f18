#include "reports/by/categories.h"

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "reports/report.h"
#include "stacks/python_stacks.h"

namespace cumemtrace {
namespace {

// When no rule matched: frameworks known only by their allocator (JAX and CuPy frames
// name no phase the table knows).
std::string by_allocator(const std::string& allocator) {
  if (allocator == "XLA") return "jax_xla";
  if (allocator == "CuPy") return "cupy";
  if (allocator == "RMM") return "rmm";
  return std::string(category::kOther);
}

}  // namespace

MemoryBeyondAllocations beyond_at_peak(const NvmlSplit& n, const GraphPoolFigures& g, uint64_t contexts) {
  if (n.known) return {n.context, n.pool_slack, n.graph_pool, n.untracked};
  return {contexts, 0, g.at_peak.known ? g.at_peak.reserved : 0, 0};
}

MemoryBeyondAllocations beyond_of_reading(const ReadingFigures& r, uint64_t contexts) {
  MemoryBeyondAllocations b;
  b.contexts = contexts;
  const uint64_t pool = r.pool_reserved;
  b.pool_slack = pool != format::kUnknown64 && pool > r.async_live ? pool - r.async_live : 0;
  if (r.graph_reserved != format::kUnknown64) b.graph_memory_pool = r.graph_reserved;
  // As the peak's split (sections/readings.h, nvml_split): NVML's figure less all that is accounted for.
  const uint64_t accounted = r.footprint + b.contexts + b.pool_slack + b.graph_memory_pool;
  if (r.process_used != format::kUnknown64 && r.process_used > accounted) b.untracked = r.process_used - accounted;
  return b;
}

MemoryBeyondAllocations beyond_at_failure(const FailedRow& row, uint64_t contexts) {
  if (!row.snapshot_known) return {contexts, 0, 0, 0};
  return beyond_of_reading({row.snapshot_arena_bytes, row.snapshot_pool_reserved, row.snapshot_async_live,
                            row.snapshot_graph_reserved, row.process_used},
                           contexts);
}

const Categorizer::Memo& Categorizer::memo(uint32_t stack_id, uint32_t python_stack_id) const {
  const auto key = std::make_pair(stack_id, python_stack_id);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  Memo m;
  const CallSite cs = stacks_.call_site(stack_id);
  // From the first frame outside the tracer and CUDA: allocator frames included, since a
  // library's workspace is known by its module right there.
  const uint32_t start = cs.owner ? cs.owner : cs.node;
  const std::vector<Frame> native = start ? stacks_.frames(start, SIZE_MAX) : std::vector<Frame>{};
  const std::vector<Frame> python = python_frames(stacks_.trace(), python_stack_id);
  int rule = -1;  // the least rule any frame matches (categories.h: CategoryRules::match)
  for (const Frame& f : python.empty() ? native : merge_stacks(native, python)) {
    auto [it, fresh] = frame_rule_.try_emplace(frame_text(f), -1);
    if (fresh) it->second = rules_.first_rule(it->first);
    if (it->second >= 0 && (rule < 0 || it->second < rule)) rule = it->second;
  }
  const std::string& allocator = owners_.of(stack_id);
  m.cached = !allocator.empty();
  m.category = rule >= 0 ? rules_.rules()[size_t(rule)].category : by_allocator(allocator);
  return memo_.emplace(key, std::move(m)).first->second;
}

Categorizer::Found Categorizer::of(uint32_t stack_id, uint32_t python_stack_id, format::Kind kind) const {
  const Memo& m = memo(stack_id, python_stack_id);
  return {m.category, m.cached && kind != format::Kind::kAsyncPool};
}

std::vector<CategoryRow> Categorizer::table(const std::vector<LiveAlloc>& live,
                                            const MemoryBeyondAllocations& beyond) const {
  std::map<std::string, CategoryRow> rows;
  for (const auto& a : live) {
    if (!format::holds_device_memory(a.kind)) continue;
    const Found f = of(a.stack_id, a.python_stack_id, a.kind);
    CategoryRow& r = rows[f.category];
    r.bytes += a.size;
    r.count += 1;
    if (f.segment) r.segment_bytes += a.size, r.segment_count += 1;
  }
  std::vector<CategoryRow> out;
  for (auto& [name, r] : rows) {
    r.category = name;
    out.push_back(std::move(r));
  }
  const std::pair<std::string_view, uint64_t> others[] = {{category::kContexts, beyond.contexts},
                                                          {category::kPoolSlack, beyond.pool_slack},
                                                          {category::kGraphMemoryPool, beyond.graph_memory_pool},
                                                          {category::kUntracked, beyond.untracked}};
  for (const auto& [name, bytes] : others)
    if (bytes) out.push_back(CategoryRow{std::string(name), bytes, 0, 0, 0, false});
  std::stable_sort(out.begin(), out.end(), [](const CategoryRow& a, const CategoryRow& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.category < b.category;
  });
  return out;
}

}  // namespace cumemtrace
