#include "reports/oom/allocator_map.h"
#include "base/text.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace cumemtrace {

void BlockTotals::add(const AllocatorBlock& b) {
  switch (b.state) {
    case format::BlockState::kActiveAllocated: allocated_bytes += b.size, ++allocated_blocks; break;
    case format::BlockState::kActivePendingFree: pending_free_bytes += b.size, ++pending_free_blocks; break;
    case format::BlockState::kInactive:
      free_bytes += b.size, ++free_blocks;
      largest_free_block = std::max(largest_free_block, b.size);
      break;
  }
}

void BlockTotals::add(const BlockTotals& o) {
  allocated_bytes += o.allocated_bytes, allocated_blocks += o.allocated_blocks;
  pending_free_bytes += o.pending_free_bytes, pending_free_blocks += o.pending_free_blocks;
  free_bytes += o.free_bytes, free_blocks += o.free_blocks;
  largest_free_block = std::max(largest_free_block, o.largest_free_block);
}

AllocatorMapView view_allocator_map(const AllocatorMap& m, const std::vector<LiveAlloc>& live, uint64_t request,
                                    const Stacks& stacks, size_t top) {
  std::unordered_map<uint64_t, const LiveAlloc*> at;
  for (const auto& a : live)
    if (a.address) at[a.address] = &a;
  AllocatorMapView v;
  v.allocator = m.allocator;
  v.time_ns = m.time_ns;
  v.request = request;
  v.segments = m.segments.size();
  std::vector<SegmentView> all;
  for (const auto& s : m.segments) {
    SegmentView sv;
    sv.address = s.address;
    sv.total_bytes = s.total_bytes;
    sv.stream = s.stream;
    sv.small = s.flags & format::kSegmentSmall;
    sv.blocks = s.blocks.size();
    for (const auto& b : s.blocks) sv.totals.add(b);
    if (auto it = at.find(s.address); it != at.end()) {
      sv.joined = true;
      sv.library = stacks.call_site(it->second->stack_id).library;
      sv.kind = it->second->kind;
      sv.allocation_bytes = it->second->size;
      ++v.joined;
      v.joined_in_use.emplace_back(s.address, sv.totals.allocated_blocks + sv.totals.pending_free_blocks > 0);
    }
    v.total_bytes += s.total_bytes;
    v.totals.add(sv.totals);
    all.push_back(std::move(sv));
  }
  v.free_block_fits = v.totals.free_blocks && v.totals.largest_free_block >= request;
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.total_bytes > b.total_bytes; });
  if (all.size() > top) all.resize(top);
  v.largest = std::move(all);
  return v;
}

namespace {

// The family a module path or function name belongs to; empty for none.
std::string family(std::string_view path, std::string_view function) {
  const std::string base = basename_of(std::string(path));
  if (has(base, "c10_cuda") || base.starts_with("libtorch") || has(function, "c10::cuda::CUDACachingAllocator") ||
      has(function, "c10::cuda::MemPool"))
    return "PyTorch";
  if (has(path, "/cupy/") || has(path, "/cupy_backends/") || has(function, "cupy")) return "CuPy";
  if (has(path, "/jaxlib/") || has(base, "xla_extension") || has(function, "tsl::BFCAllocator") ||
      has(function, "BFCAllocator"))
    return "XLA";
  if (base.starts_with("librmm") || has(path, "/rmm/") || has(function, "rmm::mr::")) return "RMM";
  return {};
}

}  // namespace

const std::string& CachingAllocators::of(uint32_t stack_id) const {
  if (auto it = memo_.find(stack_id); it != memo_.end()) return it->second;
  std::string found;
  const CallSite cs = stacks_.call_site(stack_id);
  if (cs.node) {
    // From the owner frame outward through the allocator's frames to the call site.
    // Bounded: a damaged file could make parents loop, and the allocator's frames are few.
    const size_t limit = std::min<size_t>(stacks_.trace().stack_nodes.size(), 32);
    size_t steps = 0;
    for (uint32_t id = cs.owner ? cs.owner : cs.node; id != 0 && found.empty() && steps++ < limit;) {
      const auto it = stacks_.trace().stack_nodes.find(id);
      if (it == stacks_.trace().stack_nodes.end()) break;
      const ModuleInfo* m = stacks_.module_of(it->second.ip);
      const auto f = stacks_.frames(id, 1);
      found = family(m ? m->path : std::string(), f.empty() ? std::string() : f[0].function);
      if (id == cs.node) break;
      id = it->second.parent;
    }
  }
  return memo_.emplace(stack_id, std::move(found)).first->second;
}

std::string library_handle_owner(const std::string& call_site_module) {
  const std::string base = basename_of(call_site_module);
  // Longest names first: libcublasLt is not libcublas.
  static constexpr std::pair<std::string_view, std::string_view> kLibraries[] = {
      {"libcublasLt", "cuBLASLt"}, {"libcublas", "cuBLAS"},     {"libcudnn", "cuDNN"}, {"libcufft", "cuFFT"},
      {"libcusparse", "cuSPARSE"}, {"libcusolver", "cuSOLVER"}, {"libnccl", "NCCL"}};
  for (const auto& [prefix, name] : kLibraries)
    if (base.starts_with(prefix)) return std::string(name);
  return {};
}

std::string allocator_display_name(const std::string& map_allocator) {
  if (map_allocator == "pytorch" || map_allocator == "torch") return "PyTorch";
  if (map_allocator == "cupy") return "CuPy";
  if (map_allocator == "xla" || map_allocator == "jax") return "XLA";
  if (map_allocator == "rmm") return "RMM";
  return map_allocator;
}

}  // namespace cumemtrace
