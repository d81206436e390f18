#include "reports/views/allocation_stats.h"

#include <algorithm>

#include "reports/allocation_events.h"

namespace cumemtrace {

unsigned size_bucket(uint64_t size) { return size < 2 ? 0 : 63u - unsigned(__builtin_clzll(size)); }

void AllocationScan::observe(const Event& e) {
  if (allocates_device_memory(e)) {
    const CallSite cs = stacks_.call_site(e.stack_id);
    const auto [it, fresh] = site_index_.try_emplace({cs.node, e.python_stack_id}, uint32_t(stats_.sites.size()));
    if (fresh) stats_.sites.push_back({cs.node, e.python_stack_id, cs.library});
    SiteAllocations& s = stats_.sites[it->second];
    ++s.allocations;
    s.bytes += e.size;
    StackAllocations& whole = stats_.stacks[{e.stack_id, e.python_stack_id}];
    ++whole.allocations;
    whole.bytes += e.size;
    ++stats_.allocations;
    stats_.bytes += e.size;
    SizeBucket& b = buckets_[size_bucket(e.size)];
    ++b.allocations;
    b.bytes += e.size;
    last_key_ = allocation_key(e);
    last_size_ = e.size;
    if (last_key_) held_.insert_or_assign(last_key_, it->second);
  } else if (e.op == format::Op::kFree && e.result == 0) {
    const uint64_t k = allocation_key(e);
    const uint32_t* site = k ? held_.find(k) : nullptr;
    if (!site) return;
    if (k == last_key_) {
      SiteAllocations& s = stats_.sites[*site];
      ++s.temporary;
      s.temporary_bytes += last_size_;
      ++stats_.temporary;
      last_key_ = 0;
    }
    held_.erase(k);
  }
}

AllocationStats AllocationScan::finish() {
  if (!buckets_.empty())
    for (unsigned k = buckets_.begin()->first; k <= buckets_.rbegin()->first; ++k) {
      const auto it = buckets_.find(k);
      stats_.sizes.push_back(it == buckets_.end() ? SizeBucket{k, 0, 0} : it->second);
      stats_.sizes.back().log2 = k;
    }
  return std::move(stats_);
}

std::vector<const SiteAllocations*> ranked_by_allocations(const AllocationStats& st) {
  std::vector<const SiteAllocations*> rows;
  for (const auto& s : st.sites) rows.push_back(&s);
  std::stable_sort(rows.begin(), rows.end(), [](const SiteAllocations* a, const SiteAllocations* b) {
    return a->allocations != b->allocations ? a->allocations > b->allocations : a->bytes > b->bytes;
  });
  return rows;
}

std::vector<const SiteAllocations*> ranked_by_temporary(const AllocationStats& st) {
  std::vector<const SiteAllocations*> rows;
  for (const auto& s : st.sites)
    if (s.temporary) rows.push_back(&s);
  std::stable_sort(rows.begin(), rows.end(), [](const SiteAllocations* a, const SiteAllocations* b) {
    return a->temporary != b->temporary ? a->temporary > b->temporary : a->temporary_bytes > b->temporary_bytes;
  });
  return rows;
}

}  // namespace cumemtrace
