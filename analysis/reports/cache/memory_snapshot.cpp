#include "reports/cache/memory_snapshot.h"

#include <algorithm>
#include <map>
#include <vector>

#include "read/in_file_order.h"

namespace cumemtrace {
namespace {

using format::Kind;
using format::Op;

bool is_segment_kind(Kind k) { return k == Kind::kDevice || k == Kind::kPitch || k == Kind::kAsyncPool; }
// A mapping of an expandable segment (cuMemMap), shown only when a block lay in it: a run of
// adjacent ones is one segment, as PyTorch's snapshot shows it.
bool is_mapping(const Event& e) { return e.kind == Kind::kVmmMap && (e.op == Op::kMap || e.op == Op::kUnmap); }

// The live segment holding [address, address + size), or end(); a block may span adjacent
// mappings, and then the one its start lies in is returned.
std::map<uint64_t, SnapshotAllocation>::iterator segment_of(std::map<uint64_t, SnapshotAllocation>& live,
                                                            uint64_t address, uint64_t size) {
  auto it = live.upper_bound(address);
  if (it == live.begin()) return live.end();
  --it;
  uint64_t end = it->first + it->second.size;
  for (auto next = std::next(it);
       end < address + size && it->second.mapping && next != live.end() && next->first == end && next->second.mapping;
       ++next)
    end += next->second.size;
  return address >= it->first && address + size <= end ? it : live.end();
}

// NVML's free bytes on `device` from the first snapshot at or after `t` that has them.
uint64_t device_free_after(const Trace& trace, int32_t device, uint64_t t) {
  for (const Snapshot& s : trace.snapshots) {
    if (s.time_ns < t) continue;
    const DeviceSnapshot* d = s.find(device);
    if (d && d->nvml_device_free != format::kUnknown64) return d->nvml_device_free;
  }
  return 0;
}

// The segments and blocks live as the events and block records go, and the highest device.
struct SegmentsLive {
  std::map<uint64_t, SnapshotAllocation> live;    // by address
  std::map<uint64_t, SnapshotAllocation> blocks;  // live blocks, by address
  int32_t max_device = -1;
};

// One scan: `st` from empty to the end, each device trace entry handed to `emit` with its
// device as it is made (memory holds no entry: a PyTorch job's trace has one per tensor
// allocated or freed; docs/performance.md, "Block events in bounded memory").
template <class Emit>
void replay_segments(const Trace& trace, const EventSource& events, const std::vector<bool>& held_blocks,
                     SegmentsLive& st, Emit&& emit) {
  const uint64_t mono0 = trace.process ? trace.process->start_monotonic_ns : 0;
  const uint64_t real0 = trace.process ? trace.process->start_realtime_ns : 0;
  const auto time_us = [&](uint64_t t) { return (real0 + (t >= mono0 ? t - mono0 : 0)) / 1000; };
  std::map<uint64_t, SnapshotAllocation>& live = st.live;
  std::map<uint64_t, SnapshotAllocation>& blocks = st.blocks;
  int32_t& max_device = st.max_device;
  size_t made = 0;
  for (const auto& d : trace.devices) max_device = std::max(max_device, d.ordinal);
  in_file_order(trace, events, [&](const Event* ep, const BlockEvent* b, size_t) {
    if (b) {
      const uint64_t us = time_us(b->time_ns);
      const int32_t device = b->device;
      const bool entry = b->flags & format::kBlockTraceEntry;
      if (b->op == format::BlockOp::kAlloc) {
        auto seg = segment_of(live, b->address, b->size);
        if (seg == live.end() || !seg->second.holds_blocks) return;  // not in a segment shown with blocks
        const uint64_t stream = entry ? b->stream : seg->second.stream;
        const uint64_t requested = entry ? b->requested : b->size;
        blocks[b->address] = {b->size, stream, b->device, b->stack_id, b->python_stack_id, false, requested};
        emit(device, {"alloc", b->address, requested, stream, us, b->stack_id, b->python_stack_id});
      } else if (b->op == format::BlockOp::kFree || b->op == format::BlockOp::kFreeCompleted) {
        auto it = blocks.find(b->address);
        if (it == blocks.end()) return;
        // A free that waits on other streams is requested now and completed at its own record.
        const bool waits = b->op == format::BlockOp::kFree && (b->flags & format::kBlockPendingFree);
        if (b->op == format::BlockOp::kFreeCompleted && !it->second.pending) return;
        const SnapshotAllocation& bl = it->second;
        if (b->op == format::BlockOp::kFree)
          emit(device, {"free_requested", b->address, bl.requested, bl.stream, us, bl.stack_id, bl.python_stack_id});
        if (waits) {
          it->second.pending = true;
          return;
        }
        emit(device, {"free_completed", b->address, bl.requested, bl.stream, us, bl.stack_id, bl.python_stack_id});
        blocks.erase(it);
      }
      return;
    }
    const Event& e = *ep;
    if (is_mapping(e) && e.device >= 0 && !(e.flags & format::kEventCaptured) && e.result == 0) {
      const uint64_t us = time_us(e.time_ns);
      if (e.op == Op::kMap && e.address != 0 && !live.count(e.address)) {
        const bool with_blocks = made < held_blocks.size() && held_blocks[made];
        ++made;
        if (!with_blocks) return;  // not the cache's: no mapping of a library is a segment
        max_device = std::max(max_device, e.device);
        SnapshotAllocation m{e.size, e.stream, e.device, e.stack_id, e.python_stack_id, true};
        m.mapping = true;
        live[e.address] = m;
        emit(e.device, {"segment_map", e.address, e.size, e.stream, us, e.stack_id, e.python_stack_id});
      } else if (e.op == Op::kUnmap) {
        auto it = live.find(e.address);
        if (it == live.end() || !it->second.mapping) return;
        const SnapshotAllocation a = it->second;
        live.erase(it);
        for (auto bl = blocks.lower_bound(e.address); bl != blocks.end() && bl->first < e.address + a.size;)
          bl = blocks.erase(bl);
        emit(a.device, {"segment_unmap", e.address, a.size, a.stream, us, e.stack_id, e.python_stack_id});
      }
      return;
    }
    if (!is_segment_kind(e.kind) || e.device < 0 || (e.flags & format::kEventCaptured)) return;
    const uint64_t us = time_us(e.time_ns);
    if (e.op == Op::kAlloc && e.result != 0) {
      max_device = std::max(max_device, e.device);
      emit(e.device,
           {"oom", device_free_after(trace, e.device, e.time_ns), e.size, e.stream, us, e.stack_id, e.python_stack_id});
    } else if (e.op == Op::kAlloc && e.address != 0 && !live.count(e.address)) {
      max_device = std::max(max_device, e.device);
      const bool with_blocks = made < held_blocks.size() && held_blocks[made];
      ++made;
      live[e.address] = {e.size, e.stream, e.device, e.stack_id, e.python_stack_id, with_blocks};
      emit(e.device, {"segment_alloc", e.address, e.size, e.stream, us, e.stack_id, e.python_stack_id});
      if (!with_blocks) emit(e.device, {"alloc", e.address, e.size, e.stream, us, e.stack_id, e.python_stack_id});
    } else if (e.op == Op::kFree && e.result == 0) {
      auto it = live.find(e.address);
      if (it == live.end()) return;
      const SnapshotAllocation a = it->second;
      live.erase(it);
      if (a.holds_blocks) {
        // Blocks still live in it go with it (the allocator's frees of them were not reported).
        for (auto bl = blocks.lower_bound(e.address); bl != blocks.end() && bl->first < e.address + a.size;)
          bl = blocks.erase(bl);
        emit(a.device, {"segment_free", e.address, a.size, a.stream, us, e.stack_id, e.python_stack_id});
      } else {
        for (const char* action : {"free_requested", "free_completed", "segment_free"})
          emit(a.device, {action, e.address, a.size, a.stream, us, e.stack_id, e.python_stack_id});
      }
    }
  });
}

}  // namespace

MemorySnapshot::MemorySnapshot(const Trace& trace, const EventSource& events) : trace_(trace), events_(events) {
  // Which allocations held blocks: a caching allocator's segments, whose blocks (trace
  // 1.13) are then the allocations memory_viz shows, as in PyTorch's own snapshot.
  {
    std::map<uint64_t, SnapshotAllocation> live;
    std::map<uint64_t, size_t> index;  // by address: its place in held_blocks
    in_file_order(trace_, events_, [&](const Event* e, const BlockEvent* b, size_t) {
      if (b) {
        if (b->op != format::BlockOp::kAlloc) return;
        auto seg = segment_of(live, b->address, b->size);
        for (; seg != live.end() && seg->first < b->address + b->size; ++seg) held_blocks_[index[seg->first]] = true;
        return;
      }
      const bool mapping = is_mapping(*e);
      if ((!is_segment_kind(e->kind) && !mapping) || e->device < 0 || (e->flags & format::kEventCaptured) ||
          e->result != 0)
        return;
      if (mapping && e->op == Op::kMap && e->address != 0 && !live.count(e->address)) {
        live[e->address] = {e->size};
        live[e->address].mapping = true;
        index[e->address] = held_blocks_.size();
        held_blocks_.push_back(false);
      } else if (mapping) {
        live.erase(e->address);
      } else if (e->op == Op::kAlloc && e->address != 0 && !live.count(e->address)) {
        live[e->address] = {e->size};
        index[e->address] = held_blocks_.size();
        held_blocks_.push_back(false);
      } else if (e->op == Op::kFree) {
        live.erase(e->address);
      }
    });
  }

  SegmentsLive end;
  replay_segments(trace_, events_, held_blocks_, end,
                  [&](int32_t device, const SnapshotEntry&) { ++entries_[device]; });
  live_ = std::move(end.live);
  blocks_ = std::move(end.blocks);
  max_device_ = end.max_device;

  // Each allocation, and each run of adjacent mappings of one device as one expandable
  // segment; a segment with blocks is its live blocks and the bytes between them.
  for (auto it = live_.begin(); it != live_.end();) {
    SnapshotSegment seg{it->first, it->second.size, &it->second, {}, 0, 0, 0};
    for (++it; seg.first->mapping && it != live_.end() && it->second.mapping && it->first == seg.address + seg.size &&
               it->second.device == seg.first->device;
         ++it)
      seg.size += it->second.size;
    if (seg.first->holds_blocks) {
      uint64_t at = seg.address;
      for (auto bl = blocks_.lower_bound(seg.address); bl != blocks_.end() && bl->first < seg.address + seg.size;
           ++bl) {
        if (bl->first > at) seg.pieces.push_back({at, bl->first - at, nullptr});
        seg.pieces.push_back({bl->first, bl->second.size, &bl->second});
        seg.active += bl->second.size;
        if (!bl->second.pending) seg.allocated += bl->second.size, seg.requested += bl->second.requested;
        at = bl->first + bl->second.size;
      }
      if (at < seg.address + seg.size) seg.pieces.push_back({at, seg.address + seg.size - at, nullptr});
    } else {
      seg.pieces.push_back({seg.address, seg.first->size, seg.first});
      seg.allocated = seg.requested = seg.active = seg.first->size;
    }
    segments_.push_back(std::move(seg));
  }
}

void MemorySnapshot::entries(int32_t device, const std::function<void(const SnapshotEntry&)>& emit) const {
  if (!has_entries(device)) return;
  SegmentsLive again;
  replay_segments(trace_, events_, held_blocks_, again, [&](int32_t d, const SnapshotEntry& e) {
    if (d == device) emit(e);
  });
}

}  // namespace cumemtrace
