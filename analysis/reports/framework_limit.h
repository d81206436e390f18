// A framework's own device-memory limit reached (docs/cli.md, "A framework's limit"). A
// framework that keeps its own allocator stops at its own limit without a failed CUDA call,
// so "failed allocations: none" is all the device figures would say. The rule: a process
// that ended with an error (its End record's exit status, trace 1.15, is not 0), with no
// failed allocation in its trace, whose device peak sits within 1 % of the limit its
// framework was configured with (|peak - limit| x 100 <= limit), reached that limit.
// The limit, from the recorded environment (format::kFrameworkVariables):
//   XLA (JAX): XLA_PYTHON_CLIENT_MEM_FRACTION (0 < f <= 1; unset: 0.75) of the device's
//   total, whether or not it preallocates (XLA_PYTHON_CLIENT_PREALLOCATE false or 0: not);
//   none with XLA_PYTHON_CLIENT_ALLOCATOR=platform (it allocates on demand). XLA is in use
//   when one of those variables is set or a loaded module is JAX's (a path with "jaxlib",
//   "xla_extension" or "jax_cuda" in it).
// PyTorch's per-process memory fraction leaves no trace of its figure; its allocator's own
// out-of-memory entry says it (cache/blocks.h: allocator-limit).
// A fatal signal or a kill leaves no End record, so no exit status: the rule then speaks
// only of an on-demand limit (XLA_PYTHON_CLIENT_PREALLOCATE false or 0), whose peak is the
// program's need meeting it, and says that whether it ended the process is not known; a
// preallocated limit's peak is the limit from the start, which says nothing then.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "read/reader.h"

namespace cumemtrace {

struct FrameworkLimit {
  std::string framework;  // "XLA"
  int32_t device = -1;    // where the peak met the limit
  uint64_t peak_bytes = 0, limit_bytes = 0, total_bytes = 0;
  std::string setting;       // "XLA_PYTHON_CLIENT_MEM_FRACTION=0.75", or "... unset: 0.75"
  double fraction = 0;       // of total_bytes
  bool preallocated = true;  // the framework took its limit at its start
  int32_t exit_status = 0;   // -1 with no End record
  bool trace_ended = true;   // the trace has its End record (else the process died unseen)
  // "peak 59.99 GiB of XLA's limit 60.00 GiB (XLA_PYTHON_CLIENT_MEM_FRACTION=0.75 of 80.00 GiB)"
  std::string message;
};

struct Report;
// The rule above for a report built from `trace` (its devices, failures and exit status).
std::optional<FrameworkLimit> framework_limit(const Trace& trace, const Report& rep);

}  // namespace cumemtrace
