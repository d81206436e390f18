// Per-thread hook state. Plain data in initial-exec TLS: no constructor, no
// destructor, safe to touch from any hook at any time, including in a forked child.
#pragma once

#include <cstdint>

namespace cumemtrace::interpose {

struct ThreadState {
  uint32_t driver_depth;           // driver hooks active on this thread (only the outermost counts)
  uint32_t runtime_depth;          // runtime hooks active on this thread
  uint16_t runtime_api;            // HookId of the outermost runtime call, tags driver events
  bool recorded;                   // an event was recorded during the current runtime call
  uint32_t tid;                    // cached gettid(); 0 until first use
  uint32_t asked_device_plus_one;  // device the driver last named for this thread's event, + 1
  uint64_t py_tstate;              // this thread's PyThreadState, as last found (python_frames.cpp)
  bool py_tstate_keyed;            // ... and the gilstate key held it then, in the main interpreter
  uint64_t py_key_seen;            // what the gilstate key held at this thread's last event
  uint64_t py_look_again_ns;       // none was found: when to look again (coarse monotonic clock)
  uint8_t own_frames_plus_one;     // our frames in this thread's last native stack, + 1 (stack.cpp)
};

ThreadState& thread_state();
void reset_thread_state_after_fork();

}  // namespace cumemtrace::interpose
