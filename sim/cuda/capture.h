// Stream capture: which calls a capture prohibits, from which threads, and what a
// prohibited call does to it (cuThreadExchangeStreamCaptureMode's reference: a thread in
// GLOBAL mode is prohibited from potentially unsafe calls while it has a non-relaxed
// capture of its own or any thread has a GLOBAL capture; THREAD_LOCAL only by its own;
// RELAXED never). A prohibited call fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and
// invalidates the captures that prohibited it; cuStreamEndCapture then returns
// CUDA_ERROR_STREAM_CAPTURE_INVALIDATED.
//
// Stricter than CUDA on purpose: every entry point that passes check_init() counts as
// potentially unsafe except the few that open a CaptureSafeCall (capture control and
// queries, stream-ordered allocation, cuGetProcAddress), so that a test proves a tracer
// makes no call of its own during a capture. Prohibited calls are counted
// (simcuda_capture_violations).
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <cstdint>
#include <map>
#include <vector>

namespace sim {

struct Stream;

// One memory node of a graph, in the order the graph was built (capture order).
struct GraphOp {
    bool alloc;  // else a free node
    uint64_t address;
    uint64_t size;  // bytes requested by the alloc node (0 for a free)
};

struct Capture {
    CUstreamCaptureMode mode;
    int thread;  // gettid() of the thread that began it
    bool invalidated;
    uint64_t id;
    int device = 0;              // of the capturing stream's context
    std::vector<GraphOp> ops{};  // memory nodes captured so far (api_graph.cpp runs them)
};

struct CaptureState {
    std::map<const Stream *, Capture> active;  // by stream
    uint64_t next_id = 1;
    uint64_t violations = 0;
    std::map<uint64_t, uint64_t> graph_allocations;  // address -> size: no memory behind
    uint64_t next_graph_address = 0;
};

// Marks the calling thread's current entry point as one a capture allows.
class CaptureSafeCall {
   public:
    CaptureSafeCall();
    ~CaptureSafeCall();
    CaptureSafeCall(const CaptureSafeCall &) = delete;
    CaptureSafeCall &operator=(const CaptureSafeCall &) = delete;

   private:
    bool was_;
};

// With driver_mutex() held, from check_init(): SUCCESS, or STREAM_CAPTURE_UNSUPPORTED
// after invalidating the captures that prohibit the call.
CUresult capture_guard();

// The capture `s` is in, or null (driver_mutex() held). The special handles are never
// captured here.
Capture *capture_of(CUstream s);

// Graph allocations: cuMemAllocAsync on a capturing stream returns a virtual address
// for a graph memory node; no device memory is taken (driver_mutex() held).
uint64_t graph_alloc(uint64_t size);
bool is_graph_address(uint64_t address);

// The calling thread's capture interaction mode (cuThreadExchangeStreamCaptureMode).
CUstreamCaptureMode &thread_capture_mode();
int capture_thread_id();

}  // namespace sim
