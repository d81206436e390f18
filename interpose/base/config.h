// Configuration, read once from CUMEMTRACE_* environment variables (the README's table
// lists them; nothing else configures the library).
#pragma once

#include <cstdint>
#include <string>

namespace cumemtrace::interpose {

// CUMEMTRACE_OUTPUT's default; also the name used inside a directory given as the output.
inline constexpr const char* kDefaultOutputPattern = "cumemtrace-%h-%p.trace";

struct Config {
  std::string output_pattern;    // CUMEMTRACE_OUTPUT: %p pid, %h host, %r rank, %% percent
  std::string manifest;          // CUMEMTRACE_MANIFEST: file to append each trace's path to
  uint32_t stack_depth;          // CUMEMTRACE_DEPTH: native frames per stack, 0 = no stacks
  uint32_t python_native_depth;  // CUMEMTRACE_DEPTH_WITH_PYTHON: native frames of an event
                                 // that has Python frames (default: CUMEMTRACE_DEPTH's)
  uint32_t block_native_depth;   // CUMEMTRACE_BLOCK_DEPTH_WITH_PYTHON: native frames of a block
                                 // event (a tensor) that has Python frames (default 4, at most
                                 // CUMEMTRACE_DEPTH_WITH_PYTHON's)
  uint32_t snapshot_ms;          // CUMEMTRACE_SNAPSHOT_MS: periodic snapshots, 0 = off
  uint32_t flush_ms;             // CUMEMTRACE_FLUSH_MS: at most 100
  uint32_t nvml_wait_ms;         // CUMEMTRACE_NVML_WAIT_MS: the longest a thread waits for NVML (sampler.h)
  uint64_t granule_bytes;        // CUMEMTRACE_GRANULE: fragmentation granule
  uint64_t buffer_limit_bytes;   // CUMEMTRACE_BUFFER_MB: unflushed bytes kept before dropping
  bool disabled;                 // CUMEMTRACE_DISABLE=1: forward everything, record nothing
  bool python;                   // CUMEMTRACE_PYTHON (default 1): record the Python frames of events
  bool free_stacks;              // CUMEMTRACE_FREE_STACKS (default 0): stacks (native and Python) on
                                 // frees, unmaps and address-range frees too; a failed free always
                                 // has one (on the event that restores the allocation, or on the
                                 // free refused with its result)
  bool check_stacks;             // CUMEMTRACE_CHECK_STACKS (default 0, for tests): intern every
                                 // event's stacks the full way too, walk its native stack at full
                                 // length too, and warn where either differs
  bool stack_stats;              // CUMEMTRACE_STACK_STATS (default 0, for measuring the tracer):
                                 // the walks' and a block event's parts timed, said at exit
                                 // (stacks/walk_stats.h)
  bool compress;                 // CUMEMTRACE_COMPRESS (default on): zstd-compressed flushes
  bool blocks;                   // CUMEMTRACE_BLOCKS (default on): record the blocks a caching
                                 // allocator reports (hooks_allocator.h)
  std::string log_level;         // CUMEMTRACE_LOG
};

const Config& config();

}  // namespace cumemtrace::interpose
