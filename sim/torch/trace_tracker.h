// What the stand-in libc10_cuda.so shares with a trace tracker, declared as PyTorch 2.11
// declares it (c10/core/CachingDeviceAllocator.h, c10/cuda/CUDACachingAllocator.h): the
// TraceEntry a tracker receives, field for field, and the allocator class whose virtual
// functions come in the same order, so that attachAllocatorTraceTracker sits in the same
// vtable slot and the object's run-time type has the same name. A tracer that reads the
// real library reads this one the same way (docs/simulated-driver.md).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace c10 {
using DeviceIndex = int8_t;
using CaptureId_t = unsigned long long;
using MempoolId_t = std::pair<CaptureId_t, CaptureId_t>;
struct GatheredContext {
    virtual ~GatheredContext() = default;
};

namespace CachingDeviceAllocator {
using approx_time_t = int64_t;
union trace_time_ {
    time_t t_;
    approx_time_t approx_t_;
};
struct TraceEntry {
    enum Action {
        ALLOC,
        FREE_REQUESTED,
        FREE_COMPLETED,
        SEGMENT_ALLOC,
        SEGMENT_FREE,
        SEGMENT_MAP,
        SEGMENT_UNMAP,
        SNAPSHOT,
        OOM,
    };
    Action action_;
    DeviceIndex device_;
    size_t addr_;  // OOM: the free bytes the driver reported
    std::shared_ptr<GatheredContext> context_;
    void *stream_{};
    size_t size_;
    MempoolId_t mempool_;
    trace_time_ time_{};
    std::string compile_context_;
    std::string user_metadata_;
};
using AllocatorTraceTracker = std::function<void(const TraceEntry &)>;
}  // namespace CachingDeviceAllocator

// c10::Allocator's and c10::DeviceAllocator's virtual functions, in order (the stand-in
// needs none of them: each is a placeholder of its slot).
struct Allocator {
    virtual ~Allocator() = default;
    virtual void allocate_() {}
    virtual void is_simple_data_ptr_() {}
    virtual void raw_deleter_() {}
    virtual void copy_data_() {}
};
struct DeviceAllocator : Allocator {
    virtual void initialized_() {}
    virtual void emptyCache_() {}
    virtual void recordStream_() {}
    virtual void getDeviceStats_() {}
    virtual void resetAccumulatedStats_() {}
    virtual void resetPeakStats_() {}
    virtual void getMemoryInfo_() {}
};

namespace cuda::CUDACachingAllocator {
class CUDAAllocator : public DeviceAllocator {
   public:
    virtual void raw_alloc_() {}
    virtual void raw_alloc_with_stream_() {}
    virtual void raw_delete_() {}
    virtual void init_() {}
    virtual void getMemoryFraction_() {}
    virtual void setMemoryFraction_() {}
    virtual void getExpandableSegmentSizes_() {}
    virtual void enable_() {}
    virtual void isEnabled_() {}
    virtual void cacheInfo_() {}
    virtual void getBaseAllocation_() {}
    virtual void recordStream_cuda_() {}
    virtual void snapshot_() {}
    virtual void beginAllocateToPool_() {}
    virtual void endAllocateToPool_() {}
    virtual void releasePool_() {}
    virtual void getPoolUseCount_() {}
    virtual void createOrIncrefPool_() {}
    virtual void setUseOnOOM_() {}
    virtual void setNoSplit_() {}
    virtual void checkPoolLiveAllocations_() {}
    virtual void shareIpcHandle_() {}
    virtual void getIpcDevPtr_() {}
    virtual void isHistoryEnabled_() {}
    virtual void recordHistory_() {}
    virtual void recordAnnotation_() {}
    virtual void pushCompileContext_() {}
    virtual void popCompileContext_() {}
    virtual void setUserMetadata_() {}
    virtual void getUserMetadata_() {}
    virtual void attachOutOfMemoryObserver_() {}
    virtual void attachAllocatorTraceTracker(CachingDeviceAllocator::AllocatorTraceTracker tracker) = 0;
    virtual void enablePeerAccess_() {}
    virtual void memcpyAsync_() {}
    virtual void getCheckpointState_() {}
    virtual void setCheckpointPoolState_() {}
    virtual void name_() {}
};

// The object PyTorch's inline functions call through (torch.cuda.memory's C++ side).
extern std::atomic<CUDAAllocator *> allocator;
}  // namespace cuda::CUDACachingAllocator
}  // namespace c10
