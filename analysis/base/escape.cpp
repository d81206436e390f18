#include "base/escape.h"

#include <cstdint>

namespace cumemtrace {
namespace {

// Length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), or 0.
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const auto cont = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  const uint8_t c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

void hex_byte(std::string& out, uint8_t c) {
  constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

std::string escape(std::string_view s, bool controls) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    const uint8_t c = static_cast<uint8_t>(s[i]);
    const bool c1 = n == 2 && c == 0xC2 && static_cast<uint8_t>(s[i + 1]) < 0xA0;  // U+0080..U+009F
    if (n == 0) {
      hex_byte(out, c);
      ++i;
    } else if (controls && (c < 0x20 || c == 0x7F)) {
      hex_byte(out, c);
      ++i;
    } else if (controls && c1) {
      hex_byte(out, c);
      hex_byte(out, static_cast<uint8_t>(s[i + 1]));
      i += 2;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace

std::string utf8_escaped(std::string_view s) { return escape(s, false); }
std::string printable(std::string_view s) { return escape(s, true); }

std::string xml_text(std::string_view s) {
  std::string out;
  for (const char c : printable(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string github_message(std::string_view s) {
  // GitHub also decodes %0D and %0A; printable has left no CR or LF to encode.
  std::string out;
  for (const char c : printable(s)) {
    if (c == '%') out += "%25";
    else out += c;
  }
  return out;
}

}  // namespace cumemtrace
