#include "read/damage/plausible.h"

#include <cstring>

#include "cumemtrace/trace_format.h"
#include "base/units.h"

namespace cumemtrace {
namespace {

using namespace format;

// Fixed part of `fixed` bytes followed by `strings` u32-counted strings that fill the
// payload exactly.
bool fixed_then_strings(const uint8_t* p, size_t n, size_t fixed, int strings) {
  if (n < fixed) return false;
  size_t pos = fixed;
  for (int i = 0; i < strings; ++i) {
    if (n - pos < 4) return false;
    uint32_t len;
    std::memcpy(&len, p + pos, 4);
    pos += 4;
    if (len > n - pos) return false;
    pos += len;
  }
  return pos == n;
}

bool allocates(Op op) { return op == Op::kAlloc || op == Op::kReserve || op == Op::kMap; }

// Ten years of nanoseconds: no trace runs that long, and times past it overflow sums.
constexpr uint64_t kMaxTraceNs = 10ull * 366 * 24 * 3600 * 1'000'000'000ull;

}  // namespace

// Only allocations are judged by size: a free's size is whatever the tracker recorded for it.
std::string implausible_event(const Trace& t, const Event& e) {
  // 0 is absent (a payload too short to hold it, which no writer made): it changes nothing.
  if (uint8_t(e.op) > uint8_t(Op::kShare)) return "operation " + std::to_string(int(e.op)) + " is none this format has";
  if (uint8_t(e.kind) >= kKindCount) return "kind " + std::to_string(int(e.kind)) + " is none this format has";
  if (!plausible_ordinal(e.device))
    return "device ordinal " + std::to_string(e.device) + " is no device's (-1 to " +
           std::to_string(kMaxDeviceOrdinal) + ")";
  const uint64_t start = t.process ? t.process->start_monotonic_ns : 0;
  if (e.time_ns < start)
    return "time " + std::to_string(e.time_ns) + " ns is before the trace began (" + std::to_string(start) + " ns)";
  if (e.time_ns - start > kMaxTraceNs)
    return "time " + std::to_string(e.time_ns) + " ns is more than ten years after the trace began (" +
           std::to_string(start) + " ns)";
  if (!allocates(e.op) || e.result != 0) return {};
  if (e.address + e.size < e.address)
    return "range at " + hex(e.address) + " of " + std::to_string(e.size) + " bytes runs past the end of memory";
  // Address reservations and host memory have no device size to compare with.
  if (e.op == Op::kReserve || e.kind == Kind::kHostPinned || e.kind == Kind::kManaged) return {};
  const DeviceInfo* d = t.device(e.device);
  if (d && d->total_bytes && e.size > d->total_bytes)
    return "allocation of " + iec_exact(e.size) + " on device " + std::to_string(e.device) + " of " +
           iec_exact(d->total_bytes);
  return {};
}

namespace {

// Whether the payload has its row's layout (records.def), for the types the writers of
// 1.0 to 1.2 wrote: they wrote no other.
bool fits_legacy_row(uint16_t type, const uint8_t* p, size_t n) {
  switch (static_cast<RecordType>(type)) {
#define CUMEMTRACE_RECORD(Name, id, since, label, Fixed, strings) \
  case RecordType::k##Name:                                       \
    return since <= 2 && strings >= 0 && fixed_then_strings(p, n, sizeof(Fixed), strings);
#include "cumemtrace/records.def"
#undef CUMEMTRACE_RECORD
  }
  return false;
}

}  // namespace

bool plausible_legacy_record(uint16_t type, uint16_t flags, const uint8_t* p, size_t n) {
  if (flags != 0) return false;
  switch (static_cast<RecordType>(type)) {
    case RecordType::kEvent: {  // and an op and a kind that exist
      if (!fits_legacy_row(type, p, n)) return false;
      EventRecord e;
      std::memcpy(&e, p, sizeof e);
      return e.op >= uint8_t(Op::kAlloc) && e.op <= uint8_t(Op::kShare) && e.kind < kKindCount;
    }
    case RecordType::kSnapshot: {  // entries that fill the payload
      if (n < sizeof(SnapshotRecord)) return false;
      SnapshotRecord s;
      std::memcpy(&s, p, sizeof s);
      return uint64_t(s.device_count) * s.entry_bytes == n - sizeof s &&
             (s.device_count == 0 || s.entry_bytes >= sizeof(int32_t));
    }
    default: return fits_legacy_row(type, p, n);
  }
}

bool plausible_run(const uint8_t* file, uint64_t size, uint64_t off, int count) {
  for (int i = 0; i < count; ++i) {
    if (off == size) return i > 0;
    if (size - off < sizeof(RecordHeader)) return false;
    RecordHeader h;
    std::memcpy(&h, file + off, sizeof h);
    if (h.payload_bytes > size - off - sizeof h) return false;
    if (!plausible_legacy_record(h.type, h.flags, file + off + sizeof h, h.payload_bytes)) return false;
    off += sizeof h + h.payload_bytes;
  }
  return true;
}

}  // namespace cumemtrace
