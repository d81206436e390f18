// A path as one line of `cumemtrace run`'s manifest (format::kManifestMarker): written by the
// preload library, read by the CLI. A newline in a path (CUMEMTRACE_OUTPUT, `run -o`) would
// split its line in two, and the trace would be neither listed nor symbolized; so every
// control character (below 0x20, and 0x7f) and the backslash itself are written `\xNN`
// (two lowercase hex digits), and read back the same way. Header-only: both sides use it.
#pragma once

#include <string>
#include <string_view>

namespace cumemtrace::manifest {

inline std::string escape_path(std::string_view path) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(path.size());
  for (const char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == '\\') {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

// The path a line holds; a `\` not followed by `x` and two hex digits is kept as it is
// (a manifest line written before escaping began).
inline std::string unescape_path(std::string_view line) {
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 3 < line.size() && line[i + 1] == 'x' && hex(line[i + 2]) >= 0 &&
        hex(line[i + 3]) >= 0) {
      out += static_cast<char>(hex(line[i + 2]) * 16 + hex(line[i + 3]));
      i += 3;
    } else {
      out += line[i];
    }
  }
  return out;
}

}  // namespace cumemtrace::manifest
