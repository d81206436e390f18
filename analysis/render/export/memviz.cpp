#include "render/export/memviz.h"

#include <string>
#include <string_view>
#include <vector>

#include "render/export/export_frames.h"
#include "render/export/pickle_writer.h"
#include "reports/cache/memory_snapshot.h"

namespace cumemtrace {
namespace {

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

}  // namespace

MemvizCounts write_memviz(std::ostream& out, const Trace& trace) {
  return write_memviz(out, trace, MemoryEvents(trace.events));
}

MemvizCounts write_memviz(std::ostream& out, const Trace& trace, const EventSource& events) {
  const MemorySnapshot snapshot(trace, events);
  ExportFrames frames(trace);
  PickleWriter w(out);
  MemvizCounts counts;
  w.begin_dict();

  w.string("segments");
  w.begin_list();
  for (const SnapshotSegment& seg : snapshot.segments()) {
    const SnapshotAllocation& a = *seg.first;
    w.begin_dict();
    key_int(w, "device", uint64_t(a.device));
    key_int(w, "address", seg.address);
    key_int(w, "total_size", seg.size);
    key_int(w, "allocated_size", seg.allocated);
    key_int(w, "active_size", seg.active);
    key_int(w, "requested_size", seg.requested);
    key_int(w, "stream", a.stream);
    key_str(w, "segment_type", "large");
    w.string("is_expandable");
    w.boolean(a.mapping);
    w.item();
    w.string("frames");
    write_frames(w, counts, frames.of(a.stack_id, a.python_stack_id), a.stack_id, a.python_stack_id);
    w.item();
    w.string("blocks");
    w.begin_list();
    for (const SnapshotPiece& p : seg.pieces) {
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
  for (int32_t d = 0; d <= snapshot.max_device(); ++d) {
    w.begin_list();
    snapshot.entries(d, [&](const SnapshotEntry& en) {
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
