// CUMEMTRACE_OUTPUT and `cumemtrace run -o` (docs/cli.md, "run"): %p the pid, %h the host
// name, %r the rank, %% a percent sign. A substituted field is part of one file name,
// never a path: '/' becomes '_', and so does every '.' that starts the field or touches
// another '.', so a host name "../../x" cannot lead the trace out of the folder the
// pattern names (a dot inside a name, node1.cluster, stays). Header-only, so that its
// test needs nothing of the preload library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cumemtrace::output_pattern {

inline std::string path_field(std::string_view v) {
  std::string out(v);
  for (size_t i = 0; i < v.size(); ++i) {
    const bool dot_run = v[i] == '.' && (i == 0 || v[i - 1] == '.' || (i + 1 < v.size() && v[i + 1] == '.'));
    if (v[i] == '/' || dot_run) out[i] = '_';
  }
  return out;
}

struct Fields {
  std::string host;
  int64_t pid = 0;
  int64_t rank = 0;  // RANK, else LOCAL_RANK, else the pid
};

inline std::string expand(std::string_view pattern, const Fields& f) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    switch (pattern[++i]) {
      case 'p': out += path_field(std::to_string(f.pid)); break;
      case 'h': out += path_field(f.host); break;
      case 'r': out += path_field(std::to_string(f.rank)); break;
      case '%': out += '%'; break;
      default: out += '%', out += pattern[i];
    }
  }
  return out;
}

}  // namespace cumemtrace::output_pattern
