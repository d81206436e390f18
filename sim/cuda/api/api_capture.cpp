// Stream capture entry points (capture.h has the model). Streams do no work here, so a
// capture only records which stream is capturing, in which mode, from which thread.
#include "capture.h"
#include "driver_state.h"
#include "sim_export.h"

using namespace sim;

namespace {

bool special(CUstream s) { return s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD; }

CUresult known_stream(CUstream s) {
    return state().streams.count(reinterpret_cast<const Stream *>(s)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult begin(CUstream s, CUstreamCaptureMode mode) {
    SIM_LOCKED;
    const CaptureSafeCall safe;
    if (CUresult r = check_init()) return r;
    if (special(s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;  // the sim captures created streams only
    if (CUresult r = known_stream(s)) return r;
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    if (capture_of(s)) return CUDA_ERROR_ILLEGAL_STATE;
    CaptureState &c = state().capture;
    const Stream *stream = reinterpret_cast<const Stream *>(s);
    c.active[stream] = {mode, capture_thread_id(), false, c.next_id++, state().streams[stream]->ctx->device};
    return CUDA_SUCCESS;
}

CUresult end(CUstream s, CUgraph *graph) {
    SIM_LOCKED;
    const CaptureSafeCall safe;
    if (CUresult r = check_init()) return r;
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    Capture *cap = special(s) ? nullptr : capture_of(s);
    if (!cap) return CUDA_ERROR_ILLEGAL_STATE;
    if (cap->mode != CU_STREAM_CAPTURE_MODE_RELAXED && cap->thread != capture_thread_id())
        return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    const bool invalidated = cap->invalidated;
    const int device = cap->device;
    std::vector<GraphOp> ops = std::move(cap->ops);
    state().capture.active.erase(reinterpret_cast<const Stream *>(s));
    if (invalidated) {
        *graph = nullptr;
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    // A graph of the captured memory nodes (the sim runs nothing else).
    *graph = new_graph(device, std::move(ops));
    return CUDA_SUCCESS;
}

CUresult status(CUstream s, CUstreamCaptureStatus *out, cuuint64_t *id) {
    SIM_LOCKED;
    const CaptureSafeCall safe;
    if (CUresult r = check_init()) return r;
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    const Capture *cap = special(s) ? nullptr : capture_of(s);
    *out = !cap               ? CU_STREAM_CAPTURE_STATUS_NONE
           : cap->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                              : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    if (id && cap) *id = cap->id;
    return CUDA_SUCCESS;
}

}  // namespace

SIM_API CUresult cuStreamBeginCapture(CUstream s) { return begin(s, CU_STREAM_CAPTURE_MODE_GLOBAL); }
SIM_API CUresult cuStreamBeginCapture_ptsz(CUstream s) { return begin(s, CU_STREAM_CAPTURE_MODE_GLOBAL); }
SIM_API CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode) { return begin(s, mode); }
SIM_API CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode) { return begin(s, mode); }
SIM_API CUresult cuStreamEndCapture(CUstream s, CUgraph *graph) { return end(s, graph); }
SIM_API CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *graph) { return end(s, graph); }
SIM_API CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *out) { return status(s, out, nullptr); }
SIM_API CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *out) { return status(s, out, nullptr); }
SIM_API CUresult cuStreamGetCaptureInfo_v2(CUstream s, CUstreamCaptureStatus *out, cuuint64_t *id, CUgraph *graph,
                                           const CUgraphNode **deps, size_t *ndeps) {
    if (graph) *graph = nullptr;
    if (deps) *deps = nullptr;
    if (ndeps) *ndeps = 0;
    return status(s, out, id);
}
SIM_API CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream s, CUstreamCaptureStatus *out, cuuint64_t *id, CUgraph *graph,
                                                const CUgraphNode **deps, size_t *ndeps) {
    return cuStreamGetCaptureInfo_v2(s, out, id, graph, deps, ndeps);
}

SIM_API CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *out, cuuint64_t *id, CUgraph *graph,
                                           const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps) {
    if (edges) *edges = nullptr;
    return cuStreamGetCaptureInfo_v2(s, out, id, graph, deps, ndeps);
}
SIM_API CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream s, CUstreamCaptureStatus *out, cuuint64_t *id, CUgraph *graph,
                                                const CUgraphNode **deps, const CUgraphEdgeData **edges,
                                                size_t *ndeps) {
    return cuStreamGetCaptureInfo_v3(s, out, id, graph, deps, edges, ndeps);
}

SIM_API CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode) {
    if (!mode) return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode &mine = thread_capture_mode();
    const CUstreamCaptureMode old = mine;
    mine = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

SIM_API unsigned long long simcuda_capture_violations(void) {
    SIM_LOCKED;
    return state().capture.violations;
}

SIM_API unsigned long long simcuda_graph_bytes(void) {
    SIM_LOCKED;
    unsigned long long bytes = 0;
    for (const auto &[address, size] : state().capture.graph_allocations) bytes += size;
    return bytes;  // every graph allocation node's bytes ever made (virtual: no memory)
}
