// CUDA IPC in one process's trace (docs/cli.md, "Memory shared with other processes"):
// what it exported and what it imported, each with the handle's identity (trace 1.15,
// cumemtrace/rules/ipc_id.h), so that the job view (job.h) pairs an exporter's trace with
// its importers'. One trace alone cannot tell whether another process still has its
// export open, so a single report says nothing of it.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "read/event_log.h"
#include "replay/replay.h"

namespace cumemtrace {

struct IpcExport {
  uint64_t id = 0;  // the handle's identity; 0: not recorded (a trace before 1.15)
  int32_t device = -1;
  uint64_t address = 0, size = 0;
  uint64_t time_ns = 0;        // the export
  bool live_at_end = false;    // not freed before the trace's end
  bool held_by_cache = false;  // live at the end and counted as a cache's (else a possible leak)
  // Live at the end, where the report counted it: the group (LeakGroup::allocator of
  // held_by_cache, else the leaks' group of `kind`) and the site row in it (SiteRow's key).
  std::string cache;
  format::Kind kind{};
  uint32_t site_node = 0, python_stack = 0;
  // Set by the job view (job.h, set_aside_exports): the pid of an importer that still had it
  // open at both clean ends; the report then counts it apart, neither leak nor cache.
  uint32_t still_open_in = 0;
};

struct IpcImport {
  uint64_t id = 0;          // the handle's identity; 0: not recorded
  uint32_t legacy_pid = 0;  // a trace before 1.15 may name the exporter's pid instead
  int32_t device = -1;      // the importing context's
  uint64_t address = 0, size = 0;
  uint64_t time_ns = 0;      // opened
  bool open_at_end = false;  // not closed before the trace's end
};

struct Ipc {
  std::vector<IpcExport> exports;  // in the order made; one per allocation and identity
  std::vector<IpcImport> imports;  // in the order opened
  // The exports live at the end, by address (IpcScan::finish).
  std::unordered_map<uint64_t, std::vector<size_t>> live_at_end;

  // Says where the report counted the allocation `a` live at the end, if it was exported:
  // in `cache`'s group ("" for the possible leaks), at the site row of `site_node`.
  void counted_at_end(const LiveAlloc& a, const std::string& cache, uint32_t site_node);
};

// Fed every event in file order; finish() says what was live at the end.
class IpcScan {
 public:
  void observe(const Event& e);
  Ipc finish() &&;

 private:
  Ipc ipc_;
  std::unordered_map<uint64_t, std::vector<size_t>> live_exports_;  // address -> exports
  std::unordered_map<uint64_t, size_t> open_imports_;               // address -> imports
};

}  // namespace cumemtrace
