// Putting one record's bytes together (docs/trace-format.md, "Records"): its header, the
// struct its row in records.def names, that row's u32-counted strings, then what a later
// minor version appended. The tracer (into its pending buffer, inside hooks), the seals
// (checksum.h) and the symbolizer all write through here, and the row is checked at compile
// time, so that no writer can put a record in a shape its row does not give the reader.
//
// Out is anything with append(const char*, size_t): std::string, the tracer's
// PendingBuffer, or BytesAt for a buffer already sized. Nothing here allocates: each piece
// is appended where it lies, as a hook needs (docs/performance.md, "Where an event's time
// went").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "cumemtrace/trace_format.h"

namespace cumemtrace {

// Each type's row: the struct its payload starts with, and how many strings follow it (-1:
// the payload has another shape, which its struct's comment gives).
template <format::RecordType T>
struct RecordRow;
#define CUMEMTRACE_RECORD(Name, id, since, label, FixedStruct, string_count) \
  template <>                                                                \
  struct RecordRow<format::RecordType::k##Name> {                            \
    using Fixed = format::FixedStruct;                                       \
    static constexpr int kStrings = string_count;                            \
  };
#include "cumemtrace/records.def"
#undef CUMEMTRACE_RECORD

// Writes into memory the caller has sized (a seal inside a fatal signal's handler, a header
// in front of bytes already compressed).
struct BytesAt {
  char* at;
  void append(const char* p, size_t n) {
    std::memcpy(at, p, n);
    at += n;
  }
};

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

// The strings of a row, in its order: Strings{function, file}.
template <size_t N>
struct Strings {
  std::array<std::string_view, N> items;
};
template <class... S>
Strings(const S&...) -> Strings<sizeof...(S)>;

namespace record_encode_detail {

template <format::RecordType T, class F>
constexpr void check_fixed() {
  static_assert(std::is_same_v<F, typename RecordRow<T>::Fixed>,
                "records.def: this record's payload starts with another struct");
  static_assert(std::is_trivially_copyable_v<F>);
}

// A piece after the row's strings: a string (u32-counted) or a struct (its bytes).
template <class P>
constexpr bool kIsString = std::is_convertible_v<const P&, std::string_view>;

template <class P>
size_t piece_bytes(const P& p) {
  if constexpr (kIsString<P>) {
    return 4 + std::string_view(p).size();
  } else {
    static_assert(std::is_trivially_copyable_v<P>, "a record holds strings and plain structs only");
    return sizeof p;
  }
}

template <class Out, class P>
void put_piece(Out& out, const P& p) {
  if constexpr (kIsString<P>) put_string(out, std::string_view(p));
  else put_bytes(out, &p, sizeof p);
}

template <format::RecordType T, class Out>
void put_header(Out& out, size_t payload) {
  const format::RecordHeader h{static_cast<uint16_t>(T), 0, static_cast<uint32_t>(payload)};
  put_bytes(out, &h, sizeof h);
}

// A record of structs only (no string: its length is known here) is put together on the
// stack and appended once: an event is the tracer's most frequent record, and one append
// costs fewer instructions than one per piece (docs/performance.md, "Records through one
// encoder").
template <format::RecordType T, class Out, class F, class... Tail>
void put_structs(Out& out, const F& fixed, const Tail&... tail) {
  constexpr size_t kPayload = (sizeof(F) + ... + sizeof(Tail));
  char bytes[sizeof(format::RecordHeader) + kPayload];
  BytesAt at{bytes};
  put_header<T>(at, kPayload);
  put_bytes(at, &fixed, sizeof fixed);
  (put_bytes(at, &tail, sizeof tail), ...);
  out.append(bytes, sizeof bytes);
}

}  // namespace record_encode_detail

// A record of its row's shape followed by what later minor versions appended to it, each a
// string or a plain struct, in the order trace_format.h gives under the row's struct (a
// Process record's lineage and launcher, an End record's reason, an event's Python stack).
template <format::RecordType T, class Out, class F, size_t N, class... Tail>
void put_extended_record(Out& out, const F& fixed, const Strings<N>& strings, const Tail&... tail) {
  namespace d = record_encode_detail;
  d::check_fixed<T, F>();
  static_assert(RecordRow<T>::kStrings >= 0, "records.def: this record has another shape (put_record_head)");
  static_assert(N == size_t(RecordRow<T>::kStrings), "records.def: this record has another number of strings");
  if constexpr (N == 0 && !(d::kIsString<Tail> || ...)) {
    d::put_structs<T>(out, fixed, tail...);
  } else {
    size_t payload = (sizeof fixed + ... + d::piece_bytes(tail));
    for (std::string_view s : strings.items) payload += 4 + s.size();
    d::put_header<T>(out, payload);
    put_bytes(out, &fixed, sizeof fixed);
    for (std::string_view s : strings.items) put_string(out, s);
    (d::put_piece(out, tail), ...);
  }
}

// A record of its row's shape, which is most: put_record<RecordType::kSymbol>(out, fixed,
// function, file).
template <format::RecordType T, class Out, class F, class... S>
void put_record(Out& out, const F& fixed, const S&... strings) {
  static_assert((record_encode_detail::kIsString<S> && ...), "records.def: a row's strings are strings");
  put_extended_record<T>(out, fixed, Strings<sizeof...(S)>{{std::string_view(strings)...}});
}

// The start of a record whose row gives another shape (strings -1): its header and its
// struct. The caller appends the rest, `rest_bytes` of it, as the struct's comment says.
template <format::RecordType T, class Out, class F>
void put_record_head(Out& out, const F& fixed, size_t rest_bytes) {
  namespace d = record_encode_detail;
  d::check_fixed<T, F>();
  static_assert(RecordRow<T>::kStrings < 0, "records.def: this record is its struct and strings (put_record)");
  d::put_header<T>(out, sizeof fixed + rest_bytes);
  put_bytes(out, &fixed, sizeof fixed);
}

}  // namespace cumemtrace
