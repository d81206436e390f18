// What NVTX's core injection (nvtx.cpp) and its memory extension (nvtx_mem.cpp) share: how
// a message is read, and the tool they both chain to.
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstdint>
#include <string_view>

#include "track/tracker.h"

namespace cumemtrace::interpose {

// A tool's InitializeInjectionNvtx2 ran before ours: registered strings are its handles.
extern std::atomic<bool> g_chained;

// Room for a wide name in UTF-8, on the caller's stack: a range's start and end allocate
// only under the open ranges' lock (nvtx.cpp), so a wide start's name is made without the heap.
struct WideName {
  char bytes[kMaxNameBytes + 1];  // NUL-terminated
};

// A wide name in UTF-8 (wchar_t is UTF-32 on Linux), written into `out`, which the view reads:
// a value that is no character (a surrogate, past U+10FFFF) reads as U+FFFD, and the name is
// cut before the character that would take it past kMaxNameBytes (tracker.h), so that a cut
// never splits one. Empty for null.
std::string_view utf8_of(const wchar_t* s, WideName& out);

// An ASCII message; a wide one (NVTX_MESSAGE_TYPE_UNICODE) in UTF-8, written into `wide`;
// a string registered while no tool was chained (ours: a UTF-8 copy of it,
// nvtxDomainRegisterStringA or W); "(registered string)" for a chained tool's.
std::string_view nvtx_message(int32_t type, const nvtxMessageValue_t& value, WideName& wide);

// `name` in the library CUMEMTRACE_NVTX_CHAIN names (the tool that had NVTX_INJECTION64_PATH
// before `cumemtrace run`), loaded once; null when there is none, it lacks it, or it is
// this library. Says on stderr which. Call once per name.
void* nvtx_chained_entry(const char* name);

// nvtx_mem.cpp's lock of region handles, held across a fork (nvtx.h).
void nvtx_mem_prepare_fork();
void nvtx_mem_after_fork();

}  // namespace cumemtrace::interpose
