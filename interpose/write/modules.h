// The module map (path, build-id, load address) that lets a stack be symbolized later,
// possibly on another machine. Runs on the writer thread only: dl_iterate_phdr takes
// the loader lock, which a hook must never wait for while holding ours.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <tuple>

namespace cumemtrace::interpose {

class ModuleScanner {
 public:
  // Appends a ModuleRecord for every loaded object not reported before, if the set of
  // loaded objects changed since the last call (glibc's dlpi_adds/dlpi_subs counters).
  void scan_if_changed(std::string& out);

 private:
  unsigned long long adds_ = 0, subs_ = 0;
  bool scanned_ = false;
  std::set<std::tuple<uint64_t, uint64_t, std::string>> reported_;  // (bias, start, path)
};

}  // namespace cumemtrace::interpose
