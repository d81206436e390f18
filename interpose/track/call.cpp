#include "track/call.h"

#include "base/thread_state.h"
#include "track/tracker.h"

namespace cumemtrace::interpose {

DriverCall::DriverCall(HookId id) : id_(id) {
  ThreadState& t = thread_state();
  // The driver may call itself through exported names (a stand-in driver, or a
  // future one): only the outermost hook on the thread counts.
  recording_ = t.driver_depth++ == 0 && tracing_enabled();
}

DriverCall::~DriverCall() { --thread_state().driver_depth; }

void DriverCall::record(const EventDraft& e) { record_before(e); }

format::EventRecord DriverCall::record_before(const EventDraft& e) {
  if (!recording_) return {};
  ThreadState& t = thread_state();
  t.recorded = true;
  return track(e, t.runtime_depth ? t.runtime_api : static_cast<uint16_t>(id_), e.flags);
}

void DriverCall::restore_if_failed(const format::EventRecord& freed, int32_t result) {
  if (!recording_ || result == 0 || freed.op != uint8_t(format::Op::kFree)) return;
  if (freed.flags & format::kEventUnknownAddress) {
    // Nothing to put back, but the trace must say the free failed: a cudaFree after a
    // cudaDeviceReset took its memory is refused by the driver.
    const EventDraft failed{
        .op = format::Op::kFree, .result = result, .address = freed.address, .device = freed.device};
    track(failed, freed.api, format::kEventUnknownAddress | format::kEventRestored);
    return;
  }
  const EventDraft back{.op = format::Op::kAlloc,
                        .kind = format::Kind(freed.kind),
                        .result = result,
                        .address = freed.address,
                        .size = freed.size,
                        .stream = freed.stream,
                        .handle = freed.handle,
                        .device = freed.device};
  track(back, freed.api, format::kEventRestored | (freed.flags & format::kEventCaptured));
}

void DriverCall::teardown(int32_t device, uint64_t context) {
  if (!recording_) return;
  ThreadState& t = thread_state();
  t.recorded = true;
  track_teardown(t.runtime_depth ? t.runtime_api : static_cast<uint16_t>(id_), device, context, 0);
}

RuntimeCall::RuntimeCall(HookId id) : id_(id) {
  ThreadState& t = thread_state();
  outermost_ = t.runtime_depth++ == 0;
  saved_api_ = t.runtime_api;
  saved_recorded_ = t.recorded;
  if (outermost_) t.runtime_api = static_cast<uint16_t>(id);
  t.recorded = false;
}

RuntimeCall::~RuntimeCall() {
  ThreadState& t = thread_state();
  --t.runtime_depth;
  t.runtime_api = saved_api_;
  t.recorded = saved_recorded_ || t.recorded;
}

void RuntimeCall::fallback(const EventDraft& e) {
  ThreadState& t = thread_state();
  if (t.recorded || t.driver_depth || !tracing_enabled()) return;
  t.recorded = true;
  track(e, t.runtime_api, format::kEventRuntimeLayer | e.flags);
}

bool RuntimeCall::needs_fallback() const {
  const ThreadState& t = thread_state();
  return !t.recorded && !t.driver_depth && tracing_enabled();
}

void RuntimeCall::fallback_teardown(int32_t device) {
  ThreadState& t = thread_state();
  if (t.recorded || t.driver_depth || !tracing_enabled() || device < 0) return;
  t.recorded = true;
  track_teardown(t.runtime_api, device, 0, format::kEventRuntimeLayer);
}

}  // namespace cumemtrace::interpose
