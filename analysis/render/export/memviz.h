// `cumemtrace export --format memviz`: a PyTorch memory snapshot that memory_viz
// (pytorch.org/memory_viz, torch.cuda._memory_viz) opens. What that page reads:
// docs/formats.md, "PyTorch memory snapshot".
//
// The mapping (each allocation of ours is a cudaMalloc, so it is a segment of its own
// holding one block, as docs/formats.md says):
//   alloc of kind device, pitch or async-pool -> segment_alloc, then alloc (same addr, size)
//   its free                                  -> free_requested, free_completed, segment_free
//   failed allocation of those kinds          -> oom, with device_free = NVML's free bytes
//                                                of the first snapshot after it (0 unknown)
// A segment a caching allocator handed blocks out of (trace 1.13's block records, PyTorch's
// default allocator; reports/cache/blocks.h) is shown as PyTorch's own snapshot shows it: only
// segment_alloc and segment_free for the segment, and each block an alloc, then
// free_requested and free_completed at its free; at the end its live blocks
// active_allocated and the bytes between them inactive blocks. (Blocks in expandable
// segments, which are mappings, are left out with them.)
// `segments` is what is live at the end of the trace, one segment per allocation with one
// active_allocated block filling it (or its blocks, as above), so every block lies inside its segment and undoing
// the trace from there (the viewer's "Allocator State History") meets every segment it
// expects. Failed calls, allocations made under stream capture (graph memory nodes) and
// frees that match nothing change nothing, as in the replay (replay.h). VMM mappings,
// managed and host-pinned memory are left out: they are not cudaMalloc-like segments.
//
// Values: addr/size in bytes, stream the raw CUstream, time_us epoch microseconds
// (the Process record's wall clock plus monotonic time since), device_traces indexed by
// device ordinal with an empty list for every ordinal below the highest (the reader keeps
// ordinals below 1024: plausible.h). Frames {filename, line, name}, innermost first, as
// export_frames.h names them. Each distinct frame list, and each distinct frame, is written
// once and referred to (pickle's memo) from every other block and entry that has it: a
// snapshot of 200,000 live blocks over a few hundred stacks holds a few hundred lists.
#pragma once

#include <cstdint>
#include <ostream>

#include "read/event_source.h"
#include "read/reader.h"

namespace cumemtrace {

struct MemvizCounts {
  uint64_t events = 0;       // trace entries written, all devices
  uint64_t segments = 0;     // live at the end
  uint64_t frame_lists = 0;  // distinct frame lists written out (every other use refers to one)
  uint64_t frames = 0;       // distinct frames written out
};

// Writes the snapshot (reports/cache/memory_snapshot.h) as a protocol-4 pickle: the
// trace's events and block records read in scans of `events` (event_source.h), three for
// one device: which segments held blocks, the end, each device's entries.
MemvizCounts write_memviz(std::ostream& out, const Trace& trace, const EventSource& events);
// The same of a Trace that holds its events.
MemvizCounts write_memviz(std::ostream& out, const Trace& trace);

}  // namespace cumemtrace
