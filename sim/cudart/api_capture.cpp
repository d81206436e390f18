// Stream capture, forwarded to the driver as the real runtime does.
#include "driver_link.h"
#include "runtime_state.h"
#include "sim_export.h"

using namespace simrt;

SIM_API cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuStreamBeginCapture(reinterpret_cast<CUstream>(stream), CUstreamCaptureMode(mode)));
}

SIM_API cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuStreamEndCapture(reinterpret_cast<CUstream>(stream), reinterpret_cast<CUgraph *>(graph)));
}

SIM_API cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus *status) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuStreamIsCapturing(reinterpret_cast<CUstream>(stream),
                                           reinterpret_cast<CUstreamCaptureStatus *>(status)));
}

SIM_API cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode *mode) {
    const DriverApi *api;
    if (cudaError_t e = init_driver(&api)) return result(e);
    return result(api->cuThreadExchangeStreamCaptureMode(reinterpret_cast<CUstreamCaptureMode *>(mode)));
}

// Graphs, as far as their memory goes (the driver's graph.h has the model).
SIM_API cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuGraphInstantiateWithFlags(reinterpret_cast<CUgraphExec *>(exec),
                                                   reinterpret_cast<CUgraph>(graph), flags));
}

SIM_API cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuGraphLaunch(reinterpret_cast<CUgraphExec>(exec), reinterpret_cast<CUstream>(stream)));
}

SIM_API cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t stream) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuGraphLaunch_ptsz(reinterpret_cast<CUgraphExec>(exec), reinterpret_cast<CUstream>(stream)));
}

SIM_API cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuGraphExecDestroy(reinterpret_cast<CUgraphExec>(exec)));
}

SIM_API cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuGraphDestroy(reinterpret_cast<CUgraph>(graph)));
}

SIM_API cudaError_t cudaDeviceGraphMemTrim(int device) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuDeviceGraphMemTrim(device));
}

SIM_API cudaError_t cudaDeviceGetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void *value) {
    const DriverApi *api;
    if (cudaError_t e = ensure_context(&api)) return result(e);
    return result(api->cuDeviceGetGraphMemAttribute(device, CUgraphMem_attribute(attr), value));
}
