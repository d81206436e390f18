#include "render/export/chrome.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "base/json_text.h"
#include "render/export/export_frames.h"
#include "read/record_names.h"
#include "reports/timeline/tracked_steps.h"

namespace cumemtrace {
// Named, not anonymous: a type here is a member of the file's public class, which a batched
// (unity) build would otherwise warn about (-Wsubobject-linkage).
namespace chrome_impl {

using json = nlohmann::ordered_json;

class RecordStream {
 public:
  explicit RecordStream(std::ostream& out) : out_(out) { out_ << "["; }
  ~RecordStream() { out_ << "\n]\n"; }

  // `ts_ns` first, in microseconds to the nanosecond ("1000000.500"), which a double
  // through nlohmann would print with binary noise; no ts for metadata.
  void put(const json& record, const uint64_t* ts_ns = nullptr) {
    out_ << (count_++ ? ",\n" : "\n");
    if (!ts_ns) {
      out_ << json_text(record);
      return;
    }
    const std::string body = json_text(record);
    char ts[48];
    std::snprintf(ts, sizeof ts, "{\"ts\":%llu.%03llu%s", static_cast<unsigned long long>(*ts_ns / 1000),
                  static_cast<unsigned long long>(*ts_ns % 1000), body.size() > 2 ? "," : "");
    out_ << ts << body.substr(1);
  }
  uint64_t count() const { return count_; }

 private:
  std::ostream& out_;
  uint64_t count_ = 0;
};

std::string process_label(const Trace& t, int32_t device) {
  std::string s;
  if (device >= 0) {
    s = "GPU " + std::to_string(device);
    if (const DeviceInfo* d = t.device(device); d && !d->name.empty()) s += " (" + d->name + ")";
  } else {
    s = "no device";
  }
  if (t.process) {
    s += ", pid " + std::to_string(t.process->pid);
    if (t.process->rank >= 0) s += ", rank " + std::to_string(t.process->rank);
  }
  return s;
}

// The devices a trace used: its Device records and the devices of its events.
std::set<int32_t> devices_of(const Trace& t, const EventSource& events) {
  std::set<int32_t> out;
  for (const auto& d : t.devices)
    if (d.ordinal >= 0) out.insert(d.ordinal);
  events.scan([&](const Event& e, size_t) {
    if (e.device >= 0) out.insert(e.device);
  });
  return out;
}

}  // namespace chrome_impl
using namespace chrome_impl;

struct ChromeWriter::Stream : RecordStream {
  using RecordStream::RecordStream;
};

ChromeWriter::ChromeWriter(std::ostream& out) : out_(out), rs_(std::make_unique<Stream>(out)) {}

ChromeWriter::~ChromeWriter() { close(); }

void ChromeWriter::add(const Trace& t, const EventSource& events) {
  RecordStream& rs = *rs_;
  std::map<int32_t, int> pid;  // device -> synthetic pid
  for (int32_t d : devices_of(t, events)) pid[d] = next_pid_++;
  if (pid.empty()) pid[-1] = next_pid_++;
  for (const auto& [d, p] : pid) {
    rs.put(json{{"name", "process_name"}, {"ph", "M"}, {"pid", p}, {"args", {{"name", process_label(t, d)}}}});
    rs.put(json{{"name", "process_sort_index"}, {"ph", "M"}, {"pid", p}, {"args", {{"sort_index", p}}}});
  }

  ExportFrames frames(t);
  tracked_steps(events, t.granule(), [&](const TrackedStep& step) {
    const Event& e = step.event;
    if (step.failed) {
      json stack = json::array();
      for (const Frame& f : frames.of(e.stack_id, e.python_stack_id)) stack.push_back(describe(f, FrameStyle::kExport));
      rs.put(json{{"name", "failed allocation"},
                  {"ph", "i"},
                  {"s", "p"},
                  {"pid", pid.at(e.device)},
                  {"args", {{"size", e.size}, {"result", e.result}, {"api", t.api_name(e.api)}, {"stack", stack}}}},
             &e.time_ns);
    }
    if (step.changed)
      rs.put(
          json{{"name", "memory"}, {"ph", "C"}, {"pid", pid.at(e.device)}, {"args", {{"tracked_bytes", step.tracked}}}},
          &e.time_ns);
  });
  for (const Snapshot& s : t.snapshots)
    for (const DeviceSnapshot& d : s.devices) {
      if (d.device < 0 || d.nvml_process_used == format::kUnknown64 || !pid.count(d.device)) continue;
      rs.put(json{{"name", "nvml"},
                  {"ph", "C"},
                  {"pid", pid.at(d.device)},
                  {"args", {{"process_used_bytes", d.nvml_process_used}}}},
             &s.time_ns);
    }
  for (const Mark& m : t.marks)
    for (const auto& [d, p] : pid)
      rs.put(json{{"name", m.name},
                  {"ph", "i"},
                  {"s", "p"},
                  {"pid", p},
                  {"args", {{"tid", m.tid}, {"source", mark_source_name(m.source)}}}},
             &m.time_ns);
}

uint64_t ChromeWriter::close() {
  if (rs_) {
    records_ = rs_->count();
    rs_.reset();  // writes the closing "]"
    out_.flush();
  }
  return records_;
}

uint64_t write_chrome(std::ostream& out, const std::vector<const Trace*>& traces) {
  ChromeWriter w(out);
  for (const Trace* t : traces) w.add(*t, MemoryEvents(t->events));
  return w.close();
}

}  // namespace cumemtrace
