// Bodies of the stream-capture hooks (probe/stream_capture.h says why the tracer watches captures).
// They record no event: they only keep count of the captures in progress.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "track/call.h"
#include "probe/stream_capture.h"

namespace cumemtrace::interpose {

static_assert(int(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD) == int(cudaErrorStreamCaptureWrongThread));
static_assert(int(CUDA_ERROR_INVALID_VALUE) == int(cudaErrorInvalidValue));

// Driver and runtime, every ABI: the stream comes first, the mode (if any) after.
auto on_capture_begin(HookId, auto real, auto stream, auto... rest) {
  capture_begin_before();
  const auto r = real(stream, rest...);
  capture_begin_after(bits(stream), r == 0);
  return r;
}

// An end that fails because the capture was invalidated still ends it; one refused on the
// wrong thread or for a bad argument does not.
auto on_capture_end(HookId, auto real, auto stream, auto graph) {
  const auto r = real(stream, graph);
  capture_end_after(bits(stream),
                    int(r) != int(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD) && int(r) != int(CUDA_ERROR_INVALID_VALUE));
  return r;
}

}  // namespace cumemtrace::interpose
