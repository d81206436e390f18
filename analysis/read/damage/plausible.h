// Whether a record of a trace older than 1.2 (no checksums) looks like one its writer could
// have made. Those writers wrote every known record type at one exact size, so a length
// field that was damaged shows up as an impossible size; the reader uses this to find
// damage and, scanning byte by byte, the next run of sound records after it.
//
// And, for every format, whether an event's figures or a record's device ordinal could be
// true at all: the reader sets aside what cannot, once, for every command (reader.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "read/reader.h"

namespace cumemtrace {

// `payload` is the n bytes after a RecordHeader of `type` with `flags`.
bool plausible_legacy_record(uint16_t type, uint16_t flags, const uint8_t* payload, size_t n);

// Whether `count` records (or fewer, ending exactly at `size`) starting at `off` are all
// plausible: the test for having found the framing again after damage.
bool plausible_run(const uint8_t* file, uint64_t size, uint64_t off, int count);

// Device ordinals a trace may name: -1 (host memory, or unknown) up to this. CUDA numbers
// the devices a process sees from 0; no machine shows a process a thousand of them, and a
// command that lists devices by ordinal (memviz's device_traces) must not be made to list
// two billion.
inline constexpr int32_t kMaxDeviceOrdinal = 1023;
inline bool plausible_ordinal(int32_t device) { return device >= -1 && device <= kMaxDeviceOrdinal; }

// Why `e`, read after the records before it in `trace`, cannot be true; "" when it can.
// Judged: its op and kind (known ones), device ordinal, time (not before tracing began,
// nor centuries after), and an allocation's range (within the address space; on a device,
// no larger than the device).
std::string implausible_event(const Trace& trace, const Event& e);

}  // namespace cumemtrace
