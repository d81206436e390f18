// A caching allocator's block map at a failed allocation (trace 1.4, AllocatorSegments):
// the block-level view of fragmentation inside the memory the allocator caches.
//
// The program gives the map (PyTorch: torch.cuda.memory_snapshot() in its out-of-memory
// observer, python/cumemtrace/torch.py); the report attaches it to the nearest failed
// allocation before it on the same device and joins each segment to the traced
// allocation at the segment's address among those live when the map was recorded.
// Every figure is a sum of block sizes, per segment: addresses are only ever compared
// for the join, never subtracted from sizes.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "read/reader.h"
#include "replay/replay.h"
#include "stacks/stacks.h"

namespace cumemtrace {

// Bytes and block counts over blocks of each state (format::BlockState).
struct BlockTotals {
  uint64_t allocated_bytes = 0, pending_free_bytes = 0, free_bytes = 0;
  uint64_t allocated_blocks = 0, pending_free_blocks = 0, free_blocks = 0;
  uint64_t largest_free_block = 0;
  void add(const AllocatorBlock& b);
  void add(const BlockTotals& o);
};

struct SegmentView {
  uint64_t address = 0;
  uint64_t total_bytes = 0;
  uint64_t stream = 0;
  bool small = false;
  uint64_t blocks = 0;
  BlockTotals totals;
  bool joined = false;  // a traced allocation lived at this address on the device
  std::string library;  // ... made from this library (empty when not joined)
  format::Kind kind{};
  uint64_t allocation_bytes = 0;  // ... of this size
};

struct AllocatorMapView {
  std::string allocator;
  uint64_t time_ns = 0;
  uint64_t request = 0;  // the failed allocation's size
  uint64_t segments = 0;
  uint64_t joined = 0;       // segments joined to a traced allocation
  uint64_t total_bytes = 0;  // sum of the segments' sizes
  BlockTotals totals;
  bool free_block_fits = false;      // some free block is as large as the request
  std::vector<SegmentView> largest;  // the largest segments, at most `top`
  // Every joined segment's address and whether blocks in use (allocated or pending free)
  // split it: the allocator cannot give such a segment back (torch.cuda.empty_cache()
  // releases only segments whose blocks are all free).
  std::vector<std::pair<uint64_t, bool>> joined_in_use;
};

// `live`: what held device memory on the map's device when it was recorded.
AllocatorMapView view_allocator_map(const AllocatorMap& m, const std::vector<LiveAlloc>& live, uint64_t request,
                                    const Stacks& stacks, size_t top);

}  // namespace cumemtrace

namespace cumemtrace {

// The caching allocator that made a traced allocation, by the allocation's stack: "PyTorch",
// "CuPy", "XLA", "RMM", or empty for none of them (the program's own, a library's own).
// Read from the module of the first frame outside the tracer and CUDA (libc10_cuda.so,
// libtorch*, a path under cupy/, jaxlib/ or xla_extension, librmm) and from the function
// names of that frame and of the allocator frames just outside it (CUDACachingAllocator,
// BFCAllocator, rmm::mr::). Only those frames: a library PyTorch calls (cuBLAS's own
// cudaMalloc) is that library's, not PyTorch's cache. Memoised per stack id.
class CachingAllocators {
 public:
  explicit CachingAllocators(const Stacks& stacks) : stacks_(stacks) {}
  const std::string& of(uint32_t stack_id) const;
  const Stacks& stacks() const { return stacks_; }

 private:
  const Stacks& stacks_;
  mutable std::unordered_map<uint32_t, std::string> memo_;
};

// The library whose handles keep a traced allocation until the process ends, by the
// module of the allocation's call site: "cuBLAS", "cuBLASLt", "cuDNN", "cuFFT",
// "cuSPARSE", "cuSOLVER" (their handles' workspaces) or "NCCL" (a communicator's
// buffers); empty for any other. A PyTorch job holds two or more cuBLAS workspaces
// (128.25 MiB on the H200, docs/validation.md section 19) from its first matrix product
// to its exit, leaking nothing.
std::string library_handle_owner(const std::string& call_site_module);

// The display name of a block map's allocator ("pytorch" -> "PyTorch").
std::string allocator_display_name(const std::string& map_allocator);

}  // namespace cumemtrace
