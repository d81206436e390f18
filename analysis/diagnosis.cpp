#include "diagnosis.h"

#include "result_names.h"

#include <algorithm>

namespace cumemtrace {
namespace {

constexpr uint64_t kUnknown = format::kUnknown64;

// The remedy each caching allocator documents, chosen by the failing call's library.
std::vector<std::string> cache_advice(const std::string& library) {
  if (library.find("c10_cuda") != std::string::npos || library.find("torch") != std::string::npos)
    return {"PyTorch's caching allocator holds this memory: call torch.cuda.empty_cache() before the allocation, "
            "or run with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so cached segments can grow and be reused",
            "cumemtrace run --torch-oom records PyTorch's block map at the failure: it shows how the cached segments "
            "are split"};
  if (library.find("cupy") != std::string::npos)
    return {"CuPy's memory pool holds this memory: call cupy.get_default_memory_pool().free_all_blocks() before the "
            "allocation"};
  if (library.find("xla") != std::string::npos || library.find("jax") != std::string::npos)
    return {"XLA's allocator holds this memory: set XLA_PYTHON_CLIENT_PREALLOCATE=false, or "
            "XLA_PYTHON_CLIENT_MEM_FRACTION to what the job needs"};
  if (library.find("rmm") != std::string::npos)
    return {"RMM's pool holds this memory: give the pool a smaller initial size, or release it before the allocation"};
  return {library + " holds live allocations at least as large as the request: if it caches freed memory, release "
                    "that cache before the allocation"};
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
  }
  return "unknown";
}

Diagnosis diagnose(const FailureFacts& f, const Stacks& stacks) {
  Diagnosis d;
  const uint64_t R = f.request, F = f.device_free;
  const bool free_known = F != kUnknown;

  if (f.result != 2) {  // CUDA_ERROR_OUT_OF_MEMORY and cudaErrorMemoryAllocation are both 2
    const std::string name(f.runtime_layer ? cuda_error_name(f.result) : cu_result_name(f.result));
    d.cause = Cause::kRefused;
    d.summary = "the call was refused with " + name + ", not for lack of memory";
    d.figures = {{"request", R}};
    d.advice = {"no memory figure explains " + name + ": see the failing API's documentation; a library that "
                "probes (PyTorch's expandable segments ask for a fabric handle first) handles it itself"};
    return d;
  }

  if (free_known && f.reading_at_failure && F >= R) {
    d.cause = Cause::kAddressSpace;
    d.summary = "the device had enough free memory but no contiguous range for the request";
    d.figures = {{"request", R}, {"device_free", F}};
    d.advice = {"allocate in smaller pieces, or reserve address space early (cuMemAddressReserve / "
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)"};
    return d;
  }

  uint64_t largest = 0, at_least = 0, library_bytes = 0;
  for (const auto& a : f.live) {
    if (stacks.call_site(a.stack_id).library != f.library) continue;
    library_bytes += a.size;
    if (a.size >= R) ++at_least, largest = std::max(largest, a.size);
  }
  if (at_least) {
    d.cause = Cause::kCachedByAllocator;
    d.summary = f.library + ", which made the failing call, holds " + std::to_string(at_least) +
                " live allocation(s) at least as large as the request";
    d.figures = {{"request", R}, {"largest_same_library_allocation", largest},
                 {"same_library_allocations_at_least_request", at_least}, {"same_library_live_bytes", library_bytes}};
    d.advice = cache_advice(f.library);
    return d;
  }

  if (f.pool_reserved != kUnknown && f.pool_reserved > f.async_live && f.pool_reserved - f.async_live >= R) {
    d.cause = Cause::kPoolReserve;
    d.summary = "the device's stream-ordered memory pool keeps freed memory that could hold the request";
    d.figures = {{"request", R}, {"pool_reserved", f.pool_reserved}, {"pool_live", f.async_live},
                 {"pool_slack", f.pool_reserved - f.async_live}};
    d.advice = {"the pool releases memory only at a synchronisation and above its release threshold: synchronise the "
                "stream, call cudaMemPoolTrimTo(pool, 0), or lower cudaMemPoolAttrReleaseThreshold",
                "with PyTorch's cudaMallocAsync backend: torch.cuda.empty_cache()"};
    return d;
  }

  if (!free_known) {
    d.cause = Cause::kUnknown;
    d.summary = "NVML gave no reading: how much memory was free is not known";
    d.figures = {{"request", R}};
    d.advice = {"run where libnvidia-ml.so.1 can be loaded so the trace carries NVML's figures"};
    return d;
  }

  if (f.other_processes_bytes > 0 && F + f.other_processes_bytes >= R) {
    d.cause = Cause::kOtherProcesses;
    d.summary = "other processes on the GPU hold the memory this request needed";
    d.figures = {{"request", R}, {"device_free", F}, {"other_processes_bytes", f.other_processes_bytes}};
    d.advice = {"find the processes listed (nvidia-smi shows them too) and stop them, or run on another GPU "
                "(CUDA_VISIBLE_DEVICES)"};
    return d;
  }

  const uint64_t unexplained =
      f.process_used != kUnknown && f.process_used > f.tracked_footprint ? f.process_used - f.tracked_footprint : 0;
  if (unexplained > 0 && F + unexplained >= R) {
    d.cause = Cause::kContextAndUntracked;
    d.summary = "memory no allocation explains (CUDA contexts, libraries' own workspaces) is what is missing";
    d.figures = {{"request", R}, {"device_free", F}, {"process_used", f.process_used},
                 {"tracked_footprint", f.tracked_footprint}, {"context_and_untracked", unexplained}};
    d.advice = {"see 'Contexts created' for contexts on this GPU (one per process and device: a stray "
                "torch.cuda.set_device or a library touching GPU 0 makes one), and the NVML split for untracked "
                "memory (NCCL buffers, cuBLAS workspaces, graphs)"};
    return d;
  }

  d.cause = Cause::kDemand;
  d.summary = "the live allocations need more memory than the device has left";
  d.figures = {{"request", R}, {"device_free", F}, {"shortfall", R > F ? R - F : 0},
               {"tracked_live_bytes", [&] {
                  uint64_t s = 0;
                  for (const auto& a : f.live) s += a.size;
                  return s;
                }()}};
  d.advice = {"the top call sites live at the failure are what to shrink: a smaller batch, activation "
              "checkpointing, lower precision, or sharding"};
  return d;
}

}  // namespace cumemtrace
