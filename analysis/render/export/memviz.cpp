#include "render/export/memviz.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "render/export/export_frames.h"
#include "render/export/pickle_writer.h"
#include "base/units.h"
#include "read/in_file_order.h"

namespace cumemtrace {
namespace {

using format::Kind;
using format::Op;

bool is_segment_kind(Kind k) { return k == Kind::kDevice || k == Kind::kPitch || k == Kind::kAsyncPool; }
// A mapping of an expandable segment (cuMemMap), shown only when a block lay in it: a run of
// adjacent ones is one segment, as PyTorch's snapshot shows it.
bool is_mapping(const Event& e) { return e.kind == Kind::kVmmMap && (e.op == Op::kMap || e.op == Op::kUnmap); }

struct Live {
  uint64_t size = 0;
  uint64_t stream = 0;
  int32_t device = 0;
  uint32_t stack_id = 0;
  uint32_t python_stack_id = 0;
  bool holds_blocks = false;  // a caching allocator's block lay in it (trace 1.13)
  uint64_t requested = 0;     // a block: the bytes the program asked for (its size when not known)
  bool pending = false;       // a block freed and waiting on other streams' events
  bool mapping = false;       // a mapping of an expandable segment
};

// The live segment holding [address, address + size), or end(); a block may span adjacent
// mappings, and then the one its start lies in is returned.
std::map<uint64_t, Live>::iterator segment_of(std::map<uint64_t, Live>& live, uint64_t address, uint64_t size) {
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

struct Entry {
  const char* action = "";
  uint64_t addr = 0;  // device_free for oom
  uint64_t size = 0;
  uint64_t stream = 0;
  uint64_t time_us = 0;
  uint32_t stack_id = 0;
  uint32_t python_stack_id = 0;
};

// A stack's frames as one list, written the first time and referred to after, each frame
// a dict written once too: the pickle then grows with distinct stacks, not with their uses
// (a copy per block and per entry made 831 MB of 200,000 live blocks).
void write_frames(PickleWriter& w, MemvizCounts& counts, const std::vector<Frame>& frames, uint32_t stack_id,
                  uint32_t python_stack_id) {
  const std::string list_key = "s" + std::to_string(stack_id) + "/" + std::to_string(python_stack_id);
  if (w.recall(list_key)) return;
  w.begin_list();
  for (const Frame& f : frames) {
    const std::string filename = f.python ? f.file : (!f.file.empty() ? f.file : (f.module.empty() ? "??" : f.module));
    const std::string name = describe(f, FrameStyle::kName);
    const std::string frame_key = "f" + filename + '\0' + std::to_string(f.line) + '\0' + name;
    if (!w.recall(frame_key)) {
      w.begin_dict();
      w.string("filename");
      w.string(filename);
      w.item();
      w.string("line");
      w.integer(f.line);
      w.item();
      w.string("name");
      w.string(name);
      w.item();
      w.end();
      w.remember(frame_key);
      ++counts.frames;
    }
    w.item();
  }
  w.end();
  w.remember(list_key);
  ++counts.frame_lists;
}

void key_int(PickleWriter& w, const char* key, uint64_t v) {
  w.string(key);
  w.unsigned_integer(v);
  w.item();
}

void key_str(PickleWriter& w, const char* key, const char* v) {
  w.string(key);
  w.string(v);
  w.item();
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

// The segments and blocks live as the events and block records go (the scans after the
// first), and the highest device.
struct SegmentsLive {
  std::map<uint64_t, Live> live;    // by address
  std::map<uint64_t, Live> blocks;  // live blocks, by address
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
  std::map<uint64_t, Live>& live = st.live;
  std::map<uint64_t, Live>& blocks = st.blocks;
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
        const Live& bl = it->second;
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
        Live m{e.size, e.stream, e.device, e.stack_id, e.python_stack_id, true};
        m.mapping = true;
        live[e.address] = m;
        emit(e.device, {"segment_map", e.address, e.size, e.stream, us, e.stack_id, e.python_stack_id});
      } else if (e.op == Op::kUnmap) {
        auto it = live.find(e.address);
        if (it == live.end() || !it->second.mapping) return;
        const Live a = it->second;
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
      const Live a = it->second;
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

MemvizCounts write_memviz(std::ostream& out, const Trace& trace) {
  return write_memviz(out, trace, MemoryEvents(trace.events));
}

MemvizCounts write_memviz(std::ostream& out, const Trace& trace, const EventSource& events) {
  // Which allocations held blocks: a caching allocator's segments, whose blocks (trace
  // 1.13) are then the allocations memory_viz shows, as in PyTorch's own snapshot.
  std::vector<bool> held_blocks;  // per allocation, in the order made
  {
    std::map<uint64_t, Live> live;
    std::map<uint64_t, size_t> index;  // by address: its place in held_blocks
    in_file_order(trace, events, [&](const Event* e, const BlockEvent* b, size_t) {
      if (b) {
        if (b->op != format::BlockOp::kAlloc) return;
        auto seg = segment_of(live, b->address, b->size);
        for (; seg != live.end() && seg->first < b->address + b->size; ++seg) held_blocks[index[seg->first]] = true;
        return;
      }
      const bool mapping = is_mapping(*e);
      if ((!is_segment_kind(e->kind) && !mapping) || e->device < 0 || (e->flags & format::kEventCaptured) ||
          e->result != 0)
        return;
      if (mapping && e->op == Op::kMap && e->address != 0 && !live.count(e->address)) {
        live[e->address] = {e->size};
        live[e->address].mapping = true;
        index[e->address] = held_blocks.size();
        held_blocks.push_back(false);
      } else if (mapping) {
        live.erase(e->address);
      } else if (e->op == Op::kAlloc && e->address != 0 && !live.count(e->address)) {
        live[e->address] = {e->size};
        index[e->address] = held_blocks.size();
        held_blocks.push_back(false);
      } else if (e->op == Op::kFree) {
        live.erase(e->address);
      }
    });
  }

  // The end first (the segments), then each device's entries, written as a scan makes
  // them: one scan per device that has any.
  SegmentsLive end;
  std::map<int32_t, size_t> entries;  // per device
  replay_segments(trace, events, held_blocks, end, [&](int32_t device, const Entry&) { ++entries[device]; });
  const std::map<uint64_t, Live>& live = end.live;
  const std::map<uint64_t, Live>& blocks = end.blocks;
  const int32_t max_device = end.max_device;

  ExportFrames frames(trace);
  PickleWriter w(out);
  MemvizCounts counts;
  w.begin_dict();

  // The segments at the end: each allocation, and each run of adjacent mappings as one
  // expandable segment.
  struct Segment {
    uint64_t address, size;
    const Live* first;
  };
  std::vector<Segment> segments;
  for (auto it = live.begin(); it != live.end();) {
    Segment seg{it->first, it->second.size, &it->second};
    for (++it; seg.first->mapping && it != live.end() && it->second.mapping && it->first == seg.address + seg.size &&
               it->second.device == seg.first->device;
         ++it)
      seg.size += it->second.size;
    segments.push_back(seg);
  }
  w.string("segments");
  w.begin_list();
  for (const Segment& seg : segments) {
    const Live& a = *seg.first;
    const uint64_t address = seg.address;
    const auto& fs = frames.of(a.stack_id, a.python_stack_id);
    // A segment with blocks: its live blocks, and the bytes between them as inactive blocks.
    struct Piece {
      uint64_t address, size;
      const Live* block;  // null: inactive
    };
    std::vector<Piece> pieces;
    uint64_t in_use = 0, requested = 0, active = 0;  // active: allocated and pending free
    if (a.holds_blocks) {
      uint64_t at = address;
      for (auto bl = blocks.lower_bound(address); bl != blocks.end() && bl->first < address + seg.size; ++bl) {
        if (bl->first > at) pieces.push_back({at, bl->first - at, nullptr});
        pieces.push_back({bl->first, bl->second.size, &bl->second});
        active += bl->second.size;
        if (!bl->second.pending) in_use += bl->second.size, requested += bl->second.requested;
        at = bl->first + bl->second.size;
      }
      if (at < address + seg.size) pieces.push_back({at, address + seg.size - at, nullptr});
    } else {
      pieces.push_back({address, a.size, &a});
      in_use = requested = active = a.size;
    }
    w.begin_dict();
    key_int(w, "device", uint64_t(a.device));
    key_int(w, "address", address);
    key_int(w, "total_size", seg.size);
    key_int(w, "allocated_size", in_use);
    key_int(w, "active_size", active);
    key_int(w, "requested_size", requested);
    key_int(w, "stream", a.stream);
    key_str(w, "segment_type", "large");
    w.string("is_expandable");
    w.boolean(a.mapping);
    w.item();
    w.string("frames");
    write_frames(w, counts, fs, a.stack_id, a.python_stack_id);
    w.item();
    w.string("blocks");
    w.begin_list();
    for (const Piece& p : pieces) {
      w.begin_dict();
      key_int(w, "address", p.address);
      key_int(w, "size", p.size);
      const bool block = p.block && p.block != &a;
      key_int(w, "requested_size", !p.block ? 0 : block ? p.block->requested : p.size);
      key_str(w, "state", !p.block ? "inactive" : p.block->pending ? "active_pending_free" : "active_allocated");
      w.string("frames");
      if (p.block)
        write_frames(w, counts, frames.of(p.block->stack_id, p.block->python_stack_id), p.block->stack_id,
                     p.block->python_stack_id);
      else write_frames(w, counts, {}, 0, 0);
      w.item();
      w.end();
      w.item();
    }
    w.end();
    w.item();
    w.end();
    w.item();
    ++counts.segments;
  }
  w.end();
  w.item();

  w.string("device_traces");
  w.begin_list();
  for (int32_t d = 0; d <= max_device; ++d) {
    w.begin_list();
    if (entries.count(d)) {
      SegmentsLive again;
      replay_segments(trace, events, held_blocks, again, [&](int32_t device, const Entry& en) {
        if (device != d) return;
        const bool oom = std::string_view(en.action) == "oom";
        w.begin_dict();
        key_str(w, "action", en.action);
        key_int(w, oom ? "device_free" : "addr", en.addr);
        key_int(w, "size", en.size);
        key_int(w, "stream", en.stream);
        key_int(w, "time_us", en.time_us);
        w.string("frames");
        write_frames(w, counts, frames.of(en.stack_id, en.python_stack_id), en.stack_id, en.python_stack_id);
        w.item();
        w.end();
        w.item();
        ++counts.events;
      });
    }
    w.end();
    w.item();
  }
  w.end();
  w.item();

  w.end();
  w.finish();
  return counts;
}

}  // namespace cumemtrace
