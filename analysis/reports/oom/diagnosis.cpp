#include "reports/oom/diagnosis.h"

#include "base/plural.h"
#include "read/result_names.h"

#include <algorithm>

namespace cumemtrace {

using format::kUnknown64;

namespace {

// The remedy each caching allocator documents, by the allocator's name (allocator_map.h).
std::vector<std::string> cache_advice(const std::string& allocator, bool map_known) {
  std::vector<std::string> out;
  if (allocator == "PyTorch") {
    out = {
        "PyTorch's caching allocator holds this memory: call torch.cuda.empty_cache() before the allocation, or "
        "run with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so cached segments can grow and be reused"};
    if (!map_known)
      out.push_back(
          "empty_cache() releases only segments whose blocks are all free, and how many are is not known "
          "here: cumemtrace run --torch-oom records PyTorch's block map at the failure");
  } else if (allocator == "CuPy") {
    out = {
        "CuPy's memory pool holds this memory: call cupy.get_default_memory_pool().free_all_blocks() before the "
        "allocation"};
  } else if (allocator == "XLA") {
    out = {
        "XLA's allocator holds this memory: set XLA_PYTHON_CLIENT_PREALLOCATE=false, or "
        "XLA_PYTHON_CLIENT_MEM_FRACTION to what the job needs"};
  } else if (allocator == "RMM") {
    out = {"RMM's pool holds this memory: give the pool a smaller initial size, or release it before the allocation"};
  } else {
    out = {allocator + " holds this memory: release its cache before the allocation"};
  }
  return out;
}

// Where the split of a cache into free and in-use segments came from.
enum class SplitFrom { kNothing, kBlockMap, kBlocks };

// What releases one holder (holders.h).
std::vector<std::string> holder_advice(const Holder& h, SplitFrom from) {
  const bool map_known = from != SplitFrom::kNothing;
  switch (h.kind) {
    case HolderKind::kPoolSlack:
      return {
          "the pool releases memory only at a synchronisation and above its release threshold: synchronise the "
          "stream, call cudaMemPoolTrimTo(pool, 0), or lower cudaMemPoolAttrReleaseThreshold",
          "with PyTorch's cudaMallocAsync backend: torch.cuda.empty_cache()"};
    case HolderKind::kGraphPool:
      return {
          "the graph memory pool keeps what graph allocation nodes took until it is trimmed: synchronise, then "
          "call cudaDeviceGraphMemTrim(device), or destroy executable graphs no longer launched"};
    case HolderKind::kCache: return cache_advice(h.owner, map_known);
    case HolderKind::kCacheInUse:
      if (from == SplitFrom::kBlocks)
        return {"the blocks in " + h.owner + "'s cache show " + count_of(h.count, "segment") +
                " holding live tensors: emptying the cache cannot release them (torch.cuda.empty_cache() gives "
                "back only segments whose blocks are all free). Free the tensors (the call sites below), or make "
                "the batch or the model smaller"};
      return {h.owner + "'s block map shows " + count_of(h.count, "segment") +
              " split by blocks in use: "
              "emptying the cache cannot release them (torch.cuda.empty_cache() gives back only segments whose "
              "blocks are all free). Free the tensors in them (the block map below), or run with "
              "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so segments are not left split"};
    case HolderKind::kOtherProcesses:
      return {
          "find the processes listed (nvidia-smi shows them too) and stop them, or run on another GPU "
          "(CUDA_VISIBLE_DEVICES)"};
    case HolderKind::kContexts:
      return {
          "see 'Contexts created' for contexts on this GPU (one per process and device: a stray "
          "torch.cuda.set_device or a library touching GPU 0 makes one)"};
    case HolderKind::kUntracked:
      return {
          "untracked memory is what no hooked call explains (NCCL buffers, cuBLAS workspaces made before tracing, "
          "module images): the NVML split names the rest"};
    case HolderKind::kLive:
      return {"the live allocations from " + h.owner +
              " (by call site below) are what to shrink: a smaller batch, "
              "activation checkpointing, lower precision, or sharding"};
    case HolderKind::kRounding: break;
  }
  return {};
}

Cause cause_of(const Diagnosis& d, const Release& r) {
  bool live = false, same = true;
  const auto group = [](HolderKind k) {
    if (k == HolderKind::kCacheInUse) return HolderKind::kCache;
    if (k == HolderKind::kContexts) return HolderKind::kUntracked;
    return k;
  };
  for (size_t i : r.holders) {
    // Segments split by blocks in use hold the program's tensors: releasing them means
    // freeing those, so a set with them is demand (docs/report-json.md, holder sets).
    live |= is_live(d.holders[i].kind) || d.holders[i].kind == HolderKind::kCacheInUse;
    same &= group(d.holders[i].kind) == group(d.holders[r.holders[0]].kind);
  }
  if (live) return Cause::kDemand;
  if (!same) return Cause::kSeveralHolders;
  switch (group(d.holders[r.holders[0]].kind)) {
    case HolderKind::kPoolSlack: return Cause::kPoolReserve;
    case HolderKind::kGraphPool: return Cause::kGraphPool;
    case HolderKind::kCache: return Cause::kCachedByAllocator;
    case HolderKind::kOtherProcesses: return Cause::kOtherProcesses;
    case HolderKind::kUntracked: return Cause::kContextAndUntracked;
    default: return Cause::kSeveralHolders;
  }
}

std::string summary_of(Cause c, const std::string& names) {
  switch (c) {
    case Cause::kPoolReserve:
      return "the device's stream-ordered memory pool keeps freed memory that could hold the request";
    case Cause::kGraphPool: return "the CUDA graph memory pool keeps memory that could hold the request";
    case Cause::kCachedByAllocator: return names + " hold(s) memory that could hold the request";
    case Cause::kOtherProcesses: return "other processes on the GPU hold the memory this request needed";
    case Cause::kContextAndUntracked: return "memory no allocation explains (" + names + ") is what is missing";
    case Cause::kDemand: return "the live allocations need more memory than the device has left";
    default: return "no one holder holds what is missing: " + names + " together do";
  }
}

// The cause, figures and advice of the first ranked holder set.
void explain(Diagnosis& d, const FailureFacts& f) {
  const Release& r = d.fits.front();
  const uint64_t R = f.request, F = f.device_free;
  d.cause = cause_of(d, r);
  std::string names;
  d.figures = {{"request", R}, {"device_free", F}};
  for (size_t k = 0; k < r.holders.size(); ++k) {
    const Holder& h = d.holders[r.holders[k]];
    names += (k ? k + 1 == r.holders.size() ? " and " : ", " : "") + holder_name(h);
    d.figures.emplace_back(holder_key(h), h.bytes);
  }
  d.figures.emplace_back("released", r.released);
  d.figures.emplace_back("free_plus_released", F + r.released);
  d.summary = summary_of(d.cause, names);
  switch (d.cause) {
    case Cause::kPoolReserve:
      d.figures.emplace_back("pool_reserved", f.pool_reserved);
      d.figures.emplace_back("pool_live", f.async_live);
      break;
    case Cause::kContextAndUntracked:
      if (f.process_used != kUnknown64) d.figures.emplace_back("process_used", f.process_used);
      d.figures.emplace_back("tracked_footprint", f.tracked_footprint);
      break;
    case Cause::kDemand: {
      uint64_t live = 0;
      for (const auto& a : f.live) live += a.size;
      d.figures.emplace_back("shortfall", R > F ? R - F : 0);
      d.figures.emplace_back("tracked_live_bytes", live);
      break;
    }
    default: break;
  }
  for (size_t i : r.holders)
    for (auto& a : holder_advice(d.holders[i], f.allocator_map    ? SplitFrom::kBlockMap
                                               : f.block_segments ? SplitFrom::kBlocks
                                                                  : SplitFrom::kNothing))
      d.advice.push_back(std::move(a));
}

}  // namespace

std::string_view cause_name(Cause c) {
  switch (c) {
    case Cause::kAddressSpace: return "address-space";
    case Cause::kCachedByAllocator: return "cached-by-allocator";
    case Cause::kPoolReserve: return "pool-reserve";
    case Cause::kOtherProcesses: return "other-processes";
    case Cause::kContextAndUntracked: return "context-and-untracked";
    case Cause::kDemand: return "demand";
    case Cause::kUnknown: return "unknown";
    case Cause::kRefused: return "refused";
    case Cause::kExceedsDevice: return "exceeds-device";
    case Cause::kExceedsDeviceLessContexts: return "exceeds-device-less-contexts";
    case Cause::kGraphPool: return "graph-pool";
    case Cause::kSeveralHolders: return "several-holders";
    case Cause::kAllocatorLimit: return "allocator-limit";
    case Cause::kFragmentedCache: return "fragmented-cache";
    case Cause::kPendingFrees: return "pending-frees";
  }
  return "unknown";
}

Diagnosis diagnose(const FailureFacts& f, const Stacks& stacks) {
  Diagnosis d;
  const uint64_t R = f.request, F = f.device_free;
  const bool free_known = F != kUnknown64;

  if (f.result != 2) {  // CUDA_ERROR_OUT_OF_MEMORY and cudaErrorMemoryAllocation are both 2
    const std::string name(f.runtime_layer ? cuda_error_name(f.result) : cu_result_name(f.result));
    d.cause = Cause::kRefused;
    d.summary = "the call was refused with " + name + ", not for lack of memory";
    d.figures = {{"request", R}};
    d.advice = {"no memory figure explains " + name +
                ": see the failing API's documentation; a library that "
                "probes (PyTorch's expandable segments ask for a fabric handle first) handles it itself"};
    return d;
  }

  if (free_known && f.reading_at_failure && F >= R) {
    d.cause = Cause::kAddressSpace;
    d.summary = "the device had enough free memory but no contiguous range for the request";
    d.figures = {{"request", R}, {"device_free", F}};
    d.advice = {
        "allocate in smaller pieces, or reserve address space early (cuMemAddressReserve / "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)"};
    return d;
  }

  if (f.device_total != kUnknown64 && R > f.device_total) {
    d.cause = Cause::kExceedsDevice;
    d.summary = "the request is larger than the device's whole memory: releasing anything would not have helped";
    d.figures = {{"request", R}, {"device_total", f.device_total}};
    d.advice = {
        "split the allocation (shard the tensor, a smaller batch or chunk), or run on a device with more "
        "memory"};
    return d;
  }
  if (f.device_total != kUnknown64 && f.contexts > 0 && R > f.device_total - std::min(f.contexts, f.device_total)) {
    d.cause = Cause::kExceedsDeviceLessContexts;
    d.summary = "the request is larger than the device's memory less this process's contexts on it";
    d.figures = {{"request", R},
                 {"device_total", f.device_total},
                 {"contexts", f.contexts},
                 {"total_less_contexts", f.device_total - f.contexts}};
    d.advice = {
        "split the allocation (shard the tensor, a smaller batch or chunk): a context's memory cannot be "
        "released while the process uses the device"};
    return d;
  }

  if (!free_known) {
    d.cause = Cause::kUnknown;
    d.summary = "NVML gave no reading: how much memory was free is not known";
    d.figures = {{"request", R}};
    d.advice = {"run where libnvidia-ml.so.1 can be loaded so the trace carries NVML's figures"};
    return d;
  }

  if (F >= R) {  // a reading not of the failure's own moment (else address-space, above)
    d.cause = Cause::kUnknown;
    d.summary = "the reading, not taken at the failure, shows enough free memory: what was missing then is not known";
    d.figures = {{"request", R}, {"device_free", F}};
    d.advice = {"the NVML reading nearest the failure is of another moment: see 'Failed allocations' for when"};
    return d;
  }

  HolderFacts hf;
  hf.process_used = f.process_used;
  hf.footprint = f.tracked_footprint;
  hf.contexts = f.contexts;
  hf.pool_reserved = f.pool_reserved;
  hf.async_live = f.async_live;
  hf.graph_pool = f.graph_pool;
  hf.other_processes = f.other_processes;
  hf.live = &f.live;
  if (f.allocator_map) {
    hf.map_segments = &f.allocator_map->joined_in_use;
    hf.map_allocator = allocator_display_name(f.allocator_map->allocator);
  } else if (f.block_segments) {
    hf.map_segments = f.block_segments;
    hf.map_allocator = f.block_allocator;
  }
  const CachingAllocators owners(stacks);
  d.device_free = F;
  d.holders = failure_holders(hf, owners);
  d.fits = fewest_holders(d.holders, F, R, 5);
  if (d.fits.empty()) {
    d.cause = Cause::kUnknown;
    d.summary =
        "not even every holder at the reading released together would have let the request fit: the "
        "reading and the failure disagree, or memory is held where NVML does not say";
    d.figures = {{"request", R}, {"device_free", F}};
    d.advice = {"compare the NVML split below with nvidia-smi at the failure"};
    return d;
  }
  explain(d, f);
  return d;
}

}  // namespace cumemtrace
