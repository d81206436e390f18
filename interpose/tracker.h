// The live picture of the process's CUDA memory, updated as events arrive, and the
// encoded records waiting for the writer thread.
//
// One mutex guards it. A hook does everything slow first (unwinding, driver queries)
// and holds the mutex only to update maps and append bytes: no disk, no loader lock,
// no driver call, no allocation proportional to the live set.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <cumemtrace/trace_format.h>

#include "call.h"
#include "nvml.h"

namespace cumemtrace::interpose {

// True while events should be recorded (not disabled, not past exit, trace writable).
bool tracing_enabled();

// Records one event. `api` is the HookId the program called; flags are EventFlags.
// Returns the event as recorded (device, kind and size completed by the tracker).
format::EventRecord track(const EventDraft& e, uint16_t api, uint32_t flags);

// ---- for the writer thread ----

// Moves the encoded records waiting to be written, in chunks, into `chunks` (empty).
void take_pending(std::vector<std::string>& chunks);
// Returns written chunks for reuse.
void give_back_pending(std::vector<std::string>& chunks);
// From a fatal signal's handler (fatal_signal.cpp): if the tracker's lock comes free
// within about a second (try-lock and nanosleep only: the crashing thread may hold it),
// passes each pending chunk to `write` in order, leaving them in place. False otherwise.
bool visit_pending_in_signal_handler(void (*write)(std::string_view chunk, int fd), int fd);


// What a snapshot learns from outside the tracker (NVML, the driver), per device.
struct DeviceSample {
  NvmlFigures nvml;
  uint64_t pool_reserved = format::kUnknown64;
};
struct DeviceSamples {
  std::map<int32_t, DeviceSample> devices;  // by device ordinal
  bool capture_open = false;  // the driver was not asked (capture.h): pool figures unknown
};

// Appends a SnapshotRecord of the state now, with `samples`.
void append_snapshot(format::SnapshotReason reason, const DeviceSamples& samples);

// Whether some device's tracked peak rose since the last snapshot.
bool peak_rose_since_snapshot();

// Appends the EndRecord.
void append_end();

// Samples every tracked device (call outside the tracker's lock: NVML and the driver;
// the driver only when no stream capture is open).
DeviceSamples sample_devices();

// Tracing stops for good (after the final flush at exit, or when no trace can be written).
void stop_tracing();

// ---- fork (lifecycle.cpp) ----
void tracker_prepare_fork();
void tracker_after_fork_parent();
void tracker_after_fork_child();

}  // namespace cumemtrace::interpose
