// PyTorch's memory snapshot (torch.cuda.memory._snapshot(), the state memory_viz draws)
// computed from a trace: the segments and blocks live at the end, and each device's trace
// entries in the order the events make them. What each holds and how our allocations map
// to PyTorch's segments and blocks: render/export/memviz.h and docs/formats.md, "PyTorch
// memory snapshot"; render/export/memviz.cpp writes it as the pickle memory_viz reads.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "read/event_source.h"
#include "read/reader.h"

namespace cumemtrace {

// A segment, a mapping of an expandable segment, or a caching allocator's block.
struct SnapshotAllocation {
  uint64_t size = 0;  // bytes
  uint64_t stream = 0;
  int32_t device = 0;
  uint32_t stack_id = 0;
  uint32_t python_stack_id = 0;
  bool holds_blocks = false;  // a caching allocator's block lay in it (trace 1.13)
  uint64_t requested = 0;     // a block: the bytes the program asked for (its size when not known)
  bool pending = false;       // a block freed and waiting on other streams' events
  bool mapping = false;       // a mapping of an expandable segment
};

// One trace entry. `action` is PyTorch's name (alloc, free_requested, free_completed,
// segment_alloc, segment_free, segment_map, segment_unmap, oom); for oom `addr` is the
// device's free bytes (NVML's, from the first snapshot after it; 0 unknown).
struct SnapshotEntry {
  const char* action = "";
  uint64_t addr = 0;
  uint64_t size = 0;
  uint64_t stream = 0;
  uint64_t time_us = 0;  // epoch microseconds: the Process record's wall clock plus monotonic time since
  uint32_t stack_id = 0;
  uint32_t python_stack_id = 0;
};

// A piece of a segment at the end: a live block, or the bytes between blocks (inactive).
struct SnapshotPiece {
  uint64_t address = 0, size = 0;
  const SnapshotAllocation* block = nullptr;  // null: inactive; the segment itself when it holds no blocks
};

// A segment live at the end: an allocation, or a run of adjacent mappings of one device.
struct SnapshotSegment {
  uint64_t address = 0, size = 0;
  const SnapshotAllocation* first = nullptr;  // the allocation (the run's first mapping)
  std::vector<SnapshotPiece> pieces;          // in address order, covering the segment
  uint64_t allocated = 0, requested = 0;      // in live blocks not pending a free
  uint64_t active = 0;                        // in live blocks, pending ones too
};

class MemorySnapshot {
 public:
  // Two scans of `events` (event_source.h): which allocations held blocks, then the end.
  // `trace` and `events` must outlive the snapshot (entries() scans again).
  MemorySnapshot(const Trace& trace, const EventSource& events);
  MemorySnapshot(const MemorySnapshot&) = delete;
  MemorySnapshot& operator=(const MemorySnapshot&) = delete;

  const std::vector<SnapshotSegment>& segments() const { return segments_; }
  // The highest device ordinal of the trace's devices and its entries; -1 when none.
  int32_t max_device() const { return max_device_; }
  bool has_entries(int32_t device) const { return entries_.count(device) > 0; }
  // One more scan: `device`'s entries in order, each handed to `emit` as it is made (memory
  // holds none: a PyTorch job's trace has one per tensor allocated or freed;
  // docs/performance.md, "Block events in bounded memory").
  void entries(int32_t device, const std::function<void(const SnapshotEntry&)>& emit) const;

 private:
  const Trace& trace_;
  const EventSource& events_;
  std::vector<bool> held_blocks_;                  // per allocation, in the order made
  std::map<uint64_t, SnapshotAllocation> live_;    // at the end, by address
  std::map<uint64_t, SnapshotAllocation> blocks_;  // live blocks at the end, by address
  int32_t max_device_ = -1;
  std::map<int32_t, size_t> entries_;  // per device
  std::vector<SnapshotSegment> segments_;
};

}  // namespace cumemtrace
