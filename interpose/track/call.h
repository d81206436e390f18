// The few lines every hook body is made of: open a call, forward to the real function,
// describe what happened. DriverCall counts; RuntimeCall only tags.
//
// Counting happens once, at the driver: cudaMalloc reaches cuMemAlloc_v2 through the
// pointer the runtime got from (our) cuGetProcAddress, so the driver hook sees it and
// records it with api = cudaMalloc. Only when a runtime call returns without any driver
// hook having recorded (a runtime that reached the driver some way we do not see) does
// the runtime hook record the event itself, flagged kEventRuntimeLayer.
#pragma once

#include <cstdint>

#include <cumemtrace/trace_format.h>

#include "hook_ids.h"

namespace cumemtrace::interpose {

inline constexpr int32_t kDeviceFromCall = -2;  // the tracker works the device out

struct EventDraft {
  format::Op op;
  format::Kind kind = format::Kind::kUnknown;
  int32_t result = 0;
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t stream = 0;
  uint64_t handle = 0;
  int32_t device = kDeviceFromCall;
  uint32_t flags = 0;  // EventFlags the hook knows (kEventCaptured)
};

// Output argument if the call succeeded, else 0 (never read an unset out-pointer).
template <class Result, class T>
uint64_t out(Result r, T* p) {
  return r == 0 && p ? static_cast<uint64_t>(reinterpret_cast<uintptr_t>(*p)) : 0;
}
template <class Result>
uint64_t out(Result r, unsigned long long* p) {
  return r == 0 && p ? *p : 0;
}
template <class T>
uint64_t bits(T v) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(v));
}

class DriverCall {
 public:
  explicit DriverCall(HookId id);
  ~DriverCall();
  DriverCall(const DriverCall&) = delete;
  DriverCall& operator=(const DriverCall&) = delete;

  // True for the outermost driver hook on this thread while tracing is on.
  bool recording() const { return recording_; }
  // Records the event (keeps errno as the real call left it).
  void record(const EventDraft& e);

  // Frees are recorded *before* the real call: once the driver has an address back,
  // another thread's next allocation may get it, and that allocation's event must come
  // after this free. If the free then fails, restore_if_failed puts the memory back
  // with an alloc flagged kEventRestored that carries the error.
  format::EventRecord record_before(const EventDraft& e);
  void restore_if_failed(const format::EventRecord& freed, int32_t result);

  // A context went away with its memory (call after the real call succeeded): records
  // a free for each live allocation of it (tracker.h: track_teardown).
  void teardown(int32_t device, uint64_t context);

 private:
  HookId id_;
  bool recording_;
};

class RuntimeCall {
 public:
  explicit RuntimeCall(HookId id);
  ~RuntimeCall();
  RuntimeCall(const RuntimeCall&) = delete;
  RuntimeCall& operator=(const RuntimeCall&) = delete;

  // Records `e` only if no driver hook recorded during this call.
  void fallback(const EventDraft& e);
  // Whether fallback() would record now: lets a hook skip the driver queries that only
  // its fallback event needs (the graph pool figure) when the driver hook beneath recorded.
  bool needs_fallback() const;
  // The same for a teardown of `device`'s primary context (cudaDeviceReset).
  void fallback_teardown(int32_t device);

 private:
  HookId id_;
  bool outermost_;
  uint16_t saved_api_;
  bool saved_recorded_;
};

}  // namespace cumemtrace::interpose
