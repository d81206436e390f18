// What NVTX's core injection (nvtx.cpp) and its memory extension (nvtx_mem.cpp) share: how
// a message is read, and the tool they both chain to.
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstdint>
#include <string_view>

namespace cumemtrace::interpose {

// A tool's InitializeInjectionNvtx2 ran before ours: registered strings are its handles.
extern std::atomic<bool> g_chained;

// An ASCII message, or a string registered while no tool was chained (ours: a copy of it);
// "(registered string)" for a chained tool's; empty for wide strings (not decoded).
std::string_view nvtx_message(int32_t type, const nvtxMessageValue_t& value);

// `name` in the library CUMEMTRACE_NVTX_CHAIN names (the tool that had NVTX_INJECTION64_PATH
// before `cumemtrace run`), loaded once; null when there is none, it lacks it, or it is
// this library. Says on stderr which. Call once per name.
void* nvtx_chained_entry(const char* name);

// nvtx_mem.cpp's lock of region handles, held across a fork (nvtx.h).
void nvtx_mem_prepare_fork();
void nvtx_mem_after_fork();

}  // namespace cumemtrace::interpose
