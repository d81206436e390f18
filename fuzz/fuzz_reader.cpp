// libFuzzer target: the trace reader, on any bytes. It must never crash, read out of
// bounds or report a range outside the input (reader.h promises all three).
#include <cstdint>
#include <cstdlib>

#include "read/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const cumemtrace::Trace t = cumemtrace::parse_trace({data, size});
  if (t.records_end > size) std::abort();
  uint64_t last_end = 0;
  for (const auto& d : t.damage) {
    // Ranges lie inside the file, in order, without overlap.
    if (d.byte_offset < last_end || d.bytes > size || d.byte_offset > size - d.bytes) std::abort();
    last_end = d.byte_offset + d.bytes;
  }
  if (!t.damage.empty() && (!t.error || t.error->byte_offset != t.damage.front().byte_offset)) std::abort();
  return 0;
}
