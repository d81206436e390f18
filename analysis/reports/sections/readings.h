// The tracer's readings (snapshots: NVML, the pools' reserves) beside the replayed figures:
// at a device's peak, at a failed allocation and at exit, split into what the trace accounts
// for (moments.h says which reading is chosen).
#pragma once

#include <vector>

#include "reports/report.h"

namespace cumemtrace {

// kContextCreate sizes on `device` up to `until_ns`.
uint64_t context_bytes_until(const std::vector<Event>& contexts, int32_t device, uint64_t until_ns);
// Device memory of one reading laid out in granules: the arenas of mapped allocations,
// plus physical memory (cuMemCreate) not mapped at that moment, which holds memory all the
// same (XLA creates its 105 GiB pool a moment before it maps it). 1.9: CUDA arrays too, at their descriptors' bytes:
// they hold device memory but have no address in the arenas (H200 run K: 16 MiB of arrays were otherwise "untracked").
uint64_t footprint(const DeviceSnapshot& d);
// NVML's figure for the process at (or near) the peak split (report.h's NvmlSplit).
NvmlSplit nvml_split(const Trace& t, const std::vector<Event>& contexts, int32_t device, uint64_t peak_bytes,
                     uint64_t peak_ns);
// The reading right after a failed allocation when it is of one moment (nothing came
// between the failure and it), else the nearest reading of one moment, else any.
void attach_snapshot(const Trace& t, FailedRow& row);
// The device's entry in the last exit snapshot, or null.
const DeviceSnapshot* exit_snapshot(const Trace& t, int32_t device);
// At the end: the exit snapshot split as the peak's reading is, when it is of one moment
// and saw the replayed end's bytes; else the contexts and the graph pool's last reading.
MemoryBeyondAllocations beyond_at_end(const Trace& t, const std::vector<Event>& contexts, const DeviceReport& dr,
                                      uint64_t last);

}  // namespace cumemtrace
