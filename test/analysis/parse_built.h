// Test-only: a TraceBuilder's bytes read back by the real reader, as a command would.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "read/reader.h"
#include "trace_builder.h"

namespace cumemtrace::test {

inline std::span<const uint8_t> span_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

inline Trace parse(const TraceBuilder& b) {
  const auto& s = b.bytes();
  return parse_trace({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

}  // namespace cumemtrace::test
