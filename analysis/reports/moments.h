// Which NVML reading a tracked figure may be combined with. Trace format 1.3 marks a
// snapshot entry kMomentSame when the library took its tracked figures with no event
// between them and NVML's reading: only such a reading is ever split into tracked +
// context + untracked as one sum. A figure "at the peak" needs a reading of one moment
// taken while the device's tracked bytes equalled the peak; when there is none, the
// report says so and shows the nearest reading of one moment with its own time and its
// own tracked bytes (issue: 4 of 10 real jobs paired NVML with tracked bytes of another
// moment). Older traces have no such readings: their splits are marked inexact.
#pragma once

#include <cstdint>
#include <optional>

#include "read/reader.h"

namespace cumemtrace {

struct Reading {
  const Snapshot* snapshot = nullptr;
  const DeviceSnapshot* device = nullptr;
};

// A reading of one moment on `device` with tracked bytes == `bytes`, at or after `after_ns`
// (the first such).
std::optional<Reading> reading_with_bytes(const Trace& t, int32_t device, uint64_t bytes, uint64_t after_ns);

// The reading of one moment on `device` nearest to `at_ns`.
std::optional<Reading> nearest_same_moment(const Trace& t, int32_t device, uint64_t at_ns);

// Any reading with an NVML figure on `device` nearest to `at_ns` (for traces before 1.3).
std::optional<Reading> nearest_reading(const Trace& t, int32_t device, uint64_t at_ns);

// The reading for a moment at `at_ns` when tracked bytes were `bytes`: one of one moment
// taken then or after with those bytes (`at`), else the nearest of one moment, else any.
struct Choice {
  std::optional<Reading> reading;
  bool at = false;    // taken while tracked bytes were `bytes`
  bool same = false;  // of one moment
};
Choice choose_reading(const Trace& t, int32_t device, uint64_t bytes, uint64_t at_ns);

// NVML's list of processes on `device` nearest to `at_ns`, or null.
const GpuProcesses* processes_near(const Trace& t, int32_t device, uint64_t at_ns);

}  // namespace cumemtrace
