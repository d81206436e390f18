// One code point as UTF-8, into a fixed buffer: the hooks' names (a Python frame's, a wide
// NVTX name) are written without the heap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cumemtrace::interpose {

// Appends code point `c` to out[n..cap) and advances `n`; false, writing nothing, when it
// does not fit or is past U+10FFFF. A surrogate is encoded as it is: callers that need
// well-formed UTF-8 replace it first.
inline bool put_utf8(uint32_t c, char* out, size_t cap, size_t& n) {
  char b[4];
  size_t k;
  if (c < 0x80) b[0] = char(c), k = 1;
  else if (c < 0x800) b[0] = char(0xC0 | c >> 6), b[1] = char(0x80 | (c & 63)), k = 2;
  else if (c < 0x10000)
    b[0] = char(0xE0 | c >> 12), b[1] = char(0x80 | (c >> 6 & 63)), b[2] = char(0x80 | (c & 63)), k = 3;
  else if (c < 0x110000)
    b[0] = char(0xF0 | c >> 18), b[1] = char(0x80 | (c >> 12 & 63)), b[2] = char(0x80 | (c >> 6 & 63)),
    b[3] = char(0x80 | (c & 63)), k = 4;
  else return false;
  if (cap - n < k) return false;
  std::memcpy(out + n, b, k);
  n += k;
  return true;
}

}  // namespace cumemtrace::interpose
