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
