#include "capture.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "driver_state.h"

namespace sim {
namespace {

// Plain values in TLS: nothing to destroy at thread exit.
thread_local CUstreamCaptureMode t_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
thread_local bool t_safe_call = false;

int this_thread() { return static_cast<int>(syscall(SYS_gettid)); }

// Graph allocations live in a region of their own, away from every device's heap, pool
// and VMM regions (driver_state.h), so no real allocation can ever share an address.
constexpr uint64_t kGraphBase = 0x6f0000000000ull;

}  // namespace

CaptureSafeCall::CaptureSafeCall() : was_(t_safe_call) { t_safe_call = true; }
CaptureSafeCall::~CaptureSafeCall() { t_safe_call = was_; }

CUresult capture_guard() {
    if (t_safe_call || t_mode == CU_STREAM_CAPTURE_MODE_RELAXED) return CUDA_SUCCESS;
    CaptureState &c = state().capture;
    const int me = this_thread();
    bool prohibited = false;
    for (auto &[stream, cap] : c.active) {
        const bool own = cap.thread == me && cap.mode != CU_STREAM_CAPTURE_MODE_RELAXED;
        const bool other_global =
            t_mode == CU_STREAM_CAPTURE_MODE_GLOBAL && cap.thread != me && cap.mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
        if (own || other_global) {
            cap.invalidated = true;
            prohibited = true;
        }
    }
    if (!prohibited) return CUDA_SUCCESS;
    ++c.violations;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

Capture *capture_of(CUstream s) {
    auto &active = state().capture.active;
    auto it = active.find(reinterpret_cast<const Stream *>(s));
    return it == active.end() ? nullptr : &it->second;
}

uint64_t graph_alloc(uint64_t size) {
    CaptureState &c = state().capture;
    const uint64_t address = kGraphBase + c.next_graph_address;
    c.next_graph_address += (size + kGranule - 1) / kGranule * kGranule;
    c.graph_allocations[address] = size;
    return address;
}

bool is_graph_address(uint64_t address) { return state().capture.graph_allocations.count(address) == 1; }

CUstreamCaptureMode &thread_capture_mode() { return t_mode; }
int capture_thread_id() { return this_thread(); }

}  // namespace sim
