// `report`'s text: the sections in report_sections()'s order (render/report/), and the
// pieces they show alike (sites, frames, times, devices).
#include "render/report_text.h"

#include <string>

#include "base/escape.h"
#include "base/plural.h"
#include "read/result_names.h"
#include "base/units.h"
#include "render/report/sections.h"

namespace cumemtrace {

using format::Kind;

std::string since_text(const Report& r, uint64_t t) { return seconds(t > r.start_ns ? t - r.start_ns : 0); }

std::string device_label(int32_t d) { return d < 0 ? std::string("host") : "device " + std::to_string(d); }

std::string snapshot_reason_text(format::SnapshotReason r) {
  switch (r) {
    case format::SnapshotReason::kPeriodic: return "periodic";
    case format::SnapshotReason::kFailedAllocation: return "after a failed allocation";
    case format::SnapshotReason::kExit: return "at exit";
    case format::SnapshotReason::kPeak: return "after a new peak";
    case format::SnapshotReason::kSampledPeak: return "at a sampled peak";
    case format::SnapshotReason::kLateReading: return "when a late NVML reading came";
  }
  return "reason " + std::to_string(uint32_t(r));
}

// Python frames (trace 1.6), innermost first, before the native ones: the program's own
// lines are what its author can act on. "train.py:88 in forward".
// At most `max` of them (--frames, as for native frames), then how many were left out.
void write_python_frames(std::ostream& out, const std::vector<Frame>& fs, const char* indent, size_t max) {
  for (size_t i = 0; i < fs.size() && i < max; ++i)
    out << indent << printable(describe(fs[i], FrameStyle::kReport)) << '\n';
  if (fs.size() > max) out << indent << "... " << count_of(fs.size() - max, "more Python frame") << " (--frames)\n";
}

void write_frames(std::ostream& out, const std::vector<Frame>& fs, const char* indent) {
  // libc's start-up frames end every stack of the main thread and say nothing about it.
  const size_t shown = fs.size() - libc_startup_frames(fs);
  for (size_t i = 0; i < shown; ++i) {
    out << indent << '#' << i << ' ' << printable(describe(fs[i], FrameStyle::kReport)) << '\n';
  }
  if (fs.empty()) out << indent << "(no stack recorded)\n";
}

void write_sites(std::ostream& out, const std::vector<SiteRow>& rows, uint64_t omitted, size_t max_frames) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const SiteRow& r = rows[i];
    out << "    " << i + 1 << ". " << iec_exact(r.bytes) << " in " << count_of(r.count, "allocation") << " from "
        << printable(r.library);
    if (r.device >= 0) out << " (device " << r.device << ")";
    // Which thread allocated: a site without Python frames is often a framework's own
    // thread (autograd's backward, NCCL), whose stack has no Python to show.
    if (r.threads.size() == 1) out << ", thread " << *r.threads.begin();
    else if (r.threads.size() > 1) out << ", " << r.threads.size() << " threads";
    out << '\n';
    write_python_frames(out, r.python_frames, "         ", max_frames);
    write_frames(out, r.frames, "         ");
  }
  if (omitted) out << "    ... and " << omitted << " more call sites\n";
}

// A native frame also gets its file's name and line, when symbolized: sites of one function
// differ by line.
std::string site_name(const std::vector<Frame>& native, const std::vector<Frame>& python, const std::string& library,
                      const CallerNames::Names& caller) {
  std::string text = user_frame_text(native, python);
  if (text.empty()) return printable(library);
  const bool native_named =
      !native.empty() && !native[0].function.empty() && text == elide_templates(native[0].function);
  if (native_named && !native[0].file.empty()) {
    const std::string& file = native[0].file;
    text += " at " + file.substr(file.rfind('/') + 1) + ":" + std::to_string(native[0].line);
  }
  return printable(text + caller.text);
}

// "result 800 cudaErrorNotPermitted": a failed free's error, by the layer that gave it.
std::string free_result_text(const FailedFreeRow& f) {
  return "result " + std::to_string(f.result) + " " +
         std::string(f.runtime_layer ? cuda_error_name(f.result) : cu_result_name(f.result));
}

// How a failure the program recovered from is worded (docs/cli.md, "Recovered or fatal").
std::string recovery_text(const FailedRow& f) {
  return "failed, then succeeded after " + fixed(double(f.recovered_after_ns) / 1e6, 3) + " ms";
}

void write_text(std::ostream& out, const Report& rep) {
  for (const ReportSection& s : report_sections())
    if (s.text) s.text(out, rep);
}

void write_live_text(std::ostream& out, const LiveReport& live, uint64_t start_ns) {
  out << printable(live.path) << " at " << live.at_ns << " ns ("
      << seconds(live.at_ns > start_ns ? live.at_ns - start_ns : 0) << " since start), " << live.events_applied
      << " events applied\n";
  for (const auto& d : live.devices) {
    out << "  " << device_label(d.device) << ": device bytes " << iec_exact(d.device_bytes) << ", "
        << count_of(d.count, "live allocation");
    for (int k = 0; k < format::kKindCount; ++k)
      if (d.live_count[k])
        out << "; " << format::kind_name(Kind(k)) << " " << iec(d.live_bytes[k]) << " in " << d.live_count[k];
    out << "\n";
    if (d.reserved_bytes) out << "    reserved address space " << iec_exact(d.reserved_bytes) << "\n";
    const auto& f = d.frag;
    if (f.arena_count)
      out << "    " << count_of(f.arena_count, "arena") << " of " << iec_exact(f.arena_bytes) << ", gaps "
          << iec_exact(f.gap_bytes) << ", largest gap " << iec_exact(f.largest_gap) << ", gap ratio "
          << fixed(f.gap_ratio(), 4) << ", external fragmentation " << fixed(f.external_fragmentation(), 4) << "\n";
    for (const auto& l : d.by_library)
      out << "    " << printable(l.library) << ": " << iec_exact(l.bytes) << " in " << count_of(l.count, "allocation")
          << "\n";
  }
}

// Where a failed request was: a request for device memory without a device is one the
// driver refused before any was known (no context current on the calling thread: H200 run
// AM, PyTorch's autograd thread under cudaMallocAsync), not a host allocation.
std::string failure_place(const FailedRow& f) {
  return f.device < 0 && format::holds_device_memory(f.kind) ? std::string("no device (none current on its thread)")
                                                             : device_label(f.device);
}

}  // namespace cumemtrace