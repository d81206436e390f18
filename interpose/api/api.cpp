// The C API a program may call (include/cumemtrace/api.h). Called by the program's own
// code (Python through ctypes), never from a hook: it validates, encodes the record here,
// then only copies the bytes into the tracker's pending buffer under its lock. A bad
// argument is ignored with one warning: the program is never failed by a call to us.
#include <cumemtrace/api.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <cumemtrace/record_encode.h>

#include "base/log.h"
#include "base/trace_start.h"
#include "track/context_tags.h"
#include "track/tracker.h"

namespace cumemtrace::interpose {
namespace {

// Within the reader's 64 MiB per record (analysis/read/parser.cpp): 24 MiB of segments, 32 MiB of blocks.
constexpr size_t kMaxSegments = size_t(1) << 19, kMaxBlocks = size_t(1) << 21, kMaxAllocatorName = 64;

// Why the arguments cannot be recorded, or null when they can.
const char* invalid(const char* allocator, const cumemtrace_segment* segs, size_t n_segs,
                    const cumemtrace_block* blocks, size_t n_blocks) {
  if (!allocator || strnlen(allocator, kMaxAllocatorName + 1) > kMaxAllocatorName)
    return "allocator name null or over 64 bytes";
  if ((n_segs && !segs) || (n_blocks && !blocks)) return "null array";
  if (n_segs > kMaxSegments || n_blocks > kMaxBlocks) return "too many segments or blocks";
  for (size_t i = 0; i < n_segs; ++i)
    if (uint64_t(segs[i].first_block) + segs[i].block_count > n_blocks)
      return "a segment's blocks lie outside the block array";
  for (size_t i = 0; i < n_blocks; ++i)
    if (blocks[i].state >= format::kBlockStateCount) return "unknown block state";
  return nullptr;
}

std::string encode(const char* allocator, int32_t device, const cumemtrace_segment* segs, size_t n_segs,
                   const cumemtrace_block* blocks, size_t n_blocks) {
  const std::string_view name(allocator);
  format::AllocatorSegmentsRecord head{monotonic_now_ns(),
                                       device,
                                       uint32_t(n_segs),
                                       uint32_t(n_blocks),
                                       sizeof(format::AllocatorSegment),
                                       sizeof(format::AllocatorBlock),
                                       0};
  const size_t rest =
      4 + name.size() + n_segs * sizeof(format::AllocatorSegment) + n_blocks * sizeof(format::AllocatorBlock);
  std::string out;
  out.reserve(sizeof(format::RecordHeader) + sizeof head + rest);
  put_record_head<format::RecordType::kAllocatorSegments>(out, head, rest);
  put_string(out, name);
  for (size_t i = 0; i < n_segs; ++i) {
    const cumemtrace_segment& s = segs[i];
    const format::AllocatorSegment e{s.address,
                                     s.total_size,
                                     s.allocated_size,
                                     s.stream,
                                     s.first_block,
                                     s.block_count,
                                     s.is_small ? uint32_t(format::kSegmentSmall) : 0u,
                                     0};
    put_bytes(out, &e, sizeof e);
  }
  for (size_t i = 0; i < n_blocks; ++i) {
    const format::AllocatorBlock b{blocks[i].size, blocks[i].state, 0};
    put_bytes(out, &b, sizeof b);
  }
  return out;
}

}  // namespace
}  // namespace cumemtrace::interpose

extern "C" __attribute__((visibility("default"))) int cumemtrace_mark(const char* name) {
  using namespace cumemtrace::interpose;
  if (!name) {
    log_once_warn("cumemtrace_mark: ignored: null name");
    return -1;
  }
  return track_mark(name, cumemtrace::format::MarkSource::kApi) ? 0 : -1;
}

extern "C" __attribute__((visibility("default"))) int cumemtrace_tag_push(const char* name) {
  using namespace cumemtrace::interpose;
  if (!name) {
    log_once_warn("cumemtrace_tag_push: ignored: null name");
    return -1;
  }
  try {
    return context_tag_push(name) ? 0 : -1;
  } catch (...) {  // out of memory for a name: the program goes on
    return -1;
  }
}

extern "C" __attribute__((visibility("default"))) int cumemtrace_tag_pop(void) {
  try {
    return cumemtrace::interpose::context_tag_pop() == 1 ? 0 : -1;
  } catch (...) {  // out of memory copying a context's tags: the program goes on
    return -1;
  }
}

extern "C" __attribute__((visibility("default"))) int cumemtrace_allocator_segments(
    const char* allocator, int32_t device, const cumemtrace_segment* segments, size_t n_segments,
    const cumemtrace_block* blocks, size_t n_blocks) {
  using namespace cumemtrace::interpose;
  try {
    if (const char* why = invalid(allocator, segments, n_segments, blocks, n_blocks)) {
      log_once_warn("cumemtrace_allocator_segments: ignored: {}", why);
      return -1;
    }
    return append_program_records(encode(allocator, device, segments, n_segments, blocks, n_blocks)) ? 0 : -1;
  } catch (...) {  // out of memory encoding a huge map: the program goes on
    log_once_warn("cumemtrace_allocator_segments: could not record the map");
    return -1;
  }
}

extern "C" __attribute__((visibility("default"))) int cumemtrace_stats(cumemtrace_device_stats* out, size_t capacity) {
  using namespace cumemtrace::interpose;
  if (!out && capacity) return -1;
  try {
    std::vector<DeviceStats> stats;
    if (!device_stats(stats)) return -1;
    for (size_t i = 0; i < stats.size() && i < capacity; ++i) {
      const DeviceStats& d = stats[i];
      out[i] = {
          d.device, 0, d.live_bytes, d.peak, d.peak_since_reset, d.live_since_reset_bytes, d.live_since_reset_count};
    }
    return int(stats.size());
  } catch (...) { return -1; }
}

extern "C" __attribute__((visibility("default"))) int cumemtrace_reset_peak(void) {
  return cumemtrace::interpose::reset_peak() ? 0 : -1;
}

namespace {

cumemtrace_live_site site_of(const cumemtrace::interpose::LiveSite& l) {
  cumemtrace_live_site o{};
  o.device = l.device;
  o.bytes = l.bytes;
  o.count = l.count;
  o.n_frames = cumemtrace::interpose::stack_frames(l.stack, o.frames, CUMEMTRACE_SITE_FRAMES);
  return o;
}

// Copies `text` into `out` (`n` bytes), cut to fit, always NUL-terminated.
void copy_text(char* out, size_t n, const std::string& text) {
  const size_t k = std::min(n - 1, text.size());
  std::memcpy(out, text.data(), k);
  out[k] = '\0';
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int cumemtrace_live_sites(cumemtrace_live_site* out,
                                                                            size_t capacity) {
  using namespace cumemtrace::interpose;
  if (!out && capacity) return -1;
  try {
    std::vector<LiveSite> sites;
    if (!live_sites(sites)) return -1;
    for (size_t i = 0; i < sites.size() && i < capacity; ++i) out[i] = site_of(sites[i]);
    return int(sites.size());
  } catch (...) { return -1; }
}

namespace {
int sites_python(cumemtrace_live_site_python* out, size_t capacity, bool at_peak) {
  using namespace cumemtrace::interpose;
  if (!out && capacity) return -1;
  try {
    std::vector<LiveSite> sites;
    if (!live_sites(sites, /*by_python=*/true, at_peak)) return -1;
    for (size_t i = 0; i < sites.size() && i < capacity; ++i) {
      cumemtrace_live_site_python& o = out[i];
      std::memset(&o, 0, sizeof o);
      o.site = site_of(sites[i]);
      for (const PythonFrameText& f : python_frames(sites[i].python_stack, CUMEMTRACE_SITE_PYTHON_FRAMES)) {
        cumemtrace_python_frame& p = o.python[o.n_python++];
        p.line = f.line;
        copy_text(p.file, sizeof p.file, f.file);
        copy_text(p.function, sizeof p.function, f.function);
      }
    }
    return int(sites.size());
  } catch (...) { return -1; }
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int cumemtrace_live_sites_python(cumemtrace_live_site_python* out,
                                                                                   size_t capacity) {
  return sites_python(out, capacity, false);
}

extern "C" __attribute__((visibility("default"))) int cumemtrace_peak_sites_python(cumemtrace_live_site_python* out,
                                                                                   size_t capacity) {
  return sites_python(out, capacity, true);
}
