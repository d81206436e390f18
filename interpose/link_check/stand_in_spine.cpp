// Linked only into the link checks (interpose/CMakeLists.txt), never into the library.
// track/ and hooks/ tell the spine (lifecycle.cpp) that the trace and main have started
// (track/trace_sink.h): calls up the chain, kept as plain calls for the same reason as
// the others here, with nothing to register at load.
#include "track/trace_sink.h"

namespace cumemtrace::interpose {
void on_trace_start() {}
void on_main_start() {}
}  // namespace cumemtrace::interpose
