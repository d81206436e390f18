// Human-readable sizes and times for the text report: IEC units (GiB = 2^30), because
// device memory, granules and NVML all count in powers of two.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace cumemtrace {

inline std::string iec(uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

inline std::string grouped(uint64_t n) {
  std::string s = std::to_string(n);
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(size_t(i), ",");
  return s;
}

// "1.50 GiB (1,610,612,736 B)"; plain "512 B" below a KiB.
inline std::string iec_exact(uint64_t bytes) {
  return bytes < 1024 ? iec(bytes) : iec(bytes) + " (" + grouped(bytes) + " B)";
}

inline std::string seconds(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", double(ns) / 1e9);
  return buf;
}

inline std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

inline std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace cumemtrace
