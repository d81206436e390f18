// Appends trace records (trace_format.h) to a byte buffer. One function per shape.
#pragma once

#include <cstring>
#include <string>
#include <string_view>

#include <cumemtrace/trace_format.h>

namespace cumemtrace::interpose {

// Out: anything with append(const char*, size_t), e.g. std::string or PendingBuffer.
template <class Out>
void put_bytes(Out& out, const void* p, size_t n) {
  out.append(static_cast<const char*>(p), n);
}

template <class Out>
void put_string(Out& out, std::string_view s) {
  const auto n = static_cast<uint32_t>(s.size());
  put_bytes(out, &n, sizeof n);
  out.append(s.data(), s.size());
}

inline size_t strings_bytes() { return 0; }
template <class... S>
size_t strings_bytes(std::string_view s, const S&... rest) {
  return 4 + s.size() + strings_bytes(rest...);
}

// One record: header, fixed part, then each string as u32 length + bytes.
template <class Out, class Fixed, class... S>
void put_record(Out& out, format::RecordType type, const Fixed& fixed, const S&... strings) {
  const format::RecordHeader h{static_cast<uint16_t>(type), 0,
                               static_cast<uint32_t>(sizeof(Fixed) + strings_bytes(std::string_view(strings)...))};
  put_bytes(out, &h, sizeof h);
  put_bytes(out, &fixed, sizeof fixed);
  (put_string(out, std::string_view(strings)), ...);
}

}  // namespace cumemtrace::interpose
