// Whether a record of a trace older than 1.2 (no checksums) looks like one its writer could
// have made. Those writers wrote every known record type at one exact size, so a length
// field that was damaged shows up as an impossible size; the reader uses this to find
// damage and, scanning byte by byte, the next run of sound records after it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cumemtrace {

// `payload` is the n bytes after a RecordHeader of `type` with `flags`.
bool plausible_legacy_record(uint16_t type, uint16_t flags, const uint8_t* payload, size_t n);

// Whether `count` records (or fewer, ending exactly at `size`) starting at `off` are all
// plausible: the test for having found the framing again after damage.
bool plausible_run(const uint8_t* file, uint64_t size, uint64_t off, int count);

}  // namespace cumemtrace
