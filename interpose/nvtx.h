// NVTX's injection (nvtx.cpp): ranges and marks into the trace, chained to a tool's.
#pragma once

namespace cumemtrace::interpose {

// When NVTX_INJECTION64_PATH names a library other than this one (a profiler set after
// `cumemtrace run`, or no `run` at all), NVTX calls never reach us: says so once on stderr.
void warn_if_nvtx_elsewhere();

}  // namespace cumemtrace::interpose
