// NVTX's injection (nvtx.cpp): ranges and marks into the trace, chained to a tool's.
#pragma once

namespace cumemtrace::interpose {

// When NVTX_INJECTION64_PATH names a library other than this one (a profiler set after
// `cumemtrace run`, or no `run` at all), NVTX calls never reach us: says so once on stderr.
void warn_if_nvtx_elsewhere();

// The open ranges' lock is held across a fork, so a child never finds it taken by a
// thread it does not have (lifecycle.cpp).
void nvtx_prepare_fork();
void nvtx_after_fork_parent();
void nvtx_after_fork_child();

}  // namespace cumemtrace::interpose
