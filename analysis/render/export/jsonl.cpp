#include "render/export/jsonl.h"

#include "base/json_text.h"

#include <zstd.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <set>
#include <stdexcept>

#include "render/export/export_frames.h"
#include "base/output_file.h"
#include "read/record_names.h"

namespace cumemtrace {
// Named, not anonymous: a type here is a member of the file's public class, which a batched
// (unity) build would otherwise warn about (-Wsubobject-linkage).
namespace jsonl_impl {

using json = nlohmann::ordered_json;

// One table file: lines as they come, through zstd's streaming compressor when asked, so
// a table is never held whole in memory.
class TableFile {
 public:
  TableFile(const std::string& path, bool zstd, const std::vector<std::string>& inputs)
      : path_(path), file_(path, inputs), out_(file_.stream()) {
    if (!file_.ok()) throw std::runtime_error(file_.error());
    if (zstd) {
      cctx_ = ZSTD_createCCtx();
      ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, 3);
    }
  }
  ~TableFile() {
    if (cctx_) ZSTD_freeCCtx(cctx_);
  }

  void row(const json& j) {
    buffer_ += json_text(j);
    buffer_ += '\n';
    ++rows_;
    if (buffer_.size() >= (1 << 20)) push(ZSTD_e_continue);
  }

  uint64_t close() {
    push(ZSTD_e_end);
    if (!file_.commit()) throw std::runtime_error(file_.error());
    return rows_;
  }

 private:
  void push(ZSTD_EndDirective mode) {
    if (!cctx_) {
      out_.write(buffer_.data(), std::streamsize(buffer_.size()));
      buffer_.clear();
      return;
    }
    std::string chunk(ZSTD_CStreamOutSize(), '\0');
    ZSTD_inBuffer in{buffer_.data(), buffer_.size(), 0};
    for (;;) {
      ZSTD_outBuffer o{chunk.data(), chunk.size(), 0};
      const size_t left = ZSTD_compressStream2(cctx_, &o, &in, mode);
      if (ZSTD_isError(left)) throw std::runtime_error("zstd: " + std::string(ZSTD_getErrorName(left)));
      out_.write(chunk.data(), std::streamsize(o.pos));
      if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size) break;
    }
    buffer_.clear();
  }

  std::string path_;
  OutputFile file_;
  std::ostream& out_;
  ZSTD_CCtx* cctx_ = nullptr;
  std::string buffer_;
  uint64_t rows_ = 0;
};

// NVML's "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string uuid_text(const uint8_t (&u)[16]) {
  std::string s = "GPU-";
  char hexd[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    std::snprintf(hexd, sizeof hexd, "%02x", u[i]);
    s += hexd;
  }
  return s;
}

// Not measured (the format's all-ones sentinel) is null.
json measured(uint64_t v) { return v == format::kUnknown64 ? json(nullptr) : json(v); }

}  // namespace jsonl_impl
using namespace jsonl_impl;

struct JsonlTables::Tables {
  std::unique_ptr<TableFile> processes, devices, events, snapshots, marks, frames;
};

JsonlTables::JsonlTables(const std::string& dir, const std::vector<std::string>& inputs, bool zstd)
    : tables_(std::make_unique<Tables>()) {
  const auto open = [&](const char* name) {
    return std::make_unique<TableFile>(dir + "/" + name + (zstd ? ".jsonl.zst" : ".jsonl"), zstd, inputs);
  };
  Tables& t = *tables_;
  t.processes = open("processes"), t.devices = open("devices"), t.events = open("events");
  t.snapshots = open("snapshots"), t.marks = open("marks"), t.frames = open("frames");
}

JsonlTables::~JsonlTables() = default;

void JsonlTables::add(const Trace& t, const EventSource& events) {
  Tables& out = *tables_;
  const size_t p = added_++;
  json proc = {{"process", p},
               {"path", t.path},
               {"format", std::to_string(t.version_major) + "." + std::to_string(t.version_minor)}};
  if (t.process) {
    const ProcessInfo& i = *t.process;
    proc.update(json{{"pid", i.pid},
                     {"ppid", i.ppid},
                     {"rank", i.rank},
                     {"hostname", i.hostname},
                     {"argv", i.argv},
                     {"start_monotonic_ns", i.start_monotonic_ns},
                     {"start_realtime_ns", i.start_realtime_ns},
                     {"granule_bytes", i.granule_bytes},
                     {"stack_depth", i.stack_depth},
                     {"tool_version", i.tool_version}});
  }
  proc["clean_end"] = t.end.has_value();
  proc["damaged_ranges"] = t.damage.size();
  out.processes->row(proc);
  for (const DeviceInfo& d : t.devices)
    out.devices->row({{"process", p},
                      {"device", d.ordinal},
                      {"nvml_index", d.nvml_index},
                      {"total_bytes", d.total_bytes},
                      {"uuid", uuid_text(d.uuid)},
                      {"name", d.name}});
  std::set<std::pair<uint32_t, uint32_t>> stacks;
  events.scan([&](const Event& e, size_t i) {
    out.events->row({{"process", p},
                     {"seq", i},
                     {"time_ns", e.time_ns},
                     {"op", op_name(e.op)},
                     {"kind", std::string(format::kind_name(e.kind))},
                     {"api", t.api_name(e.api)},
                     {"device", e.device},
                     {"address", e.address},
                     {"size", e.size},
                     {"stream", e.stream},
                     {"handle", e.handle},
                     {"tid", e.tid},
                     {"result", e.result},
                     {"flags", e.flags},
                     {"stack_id", e.stack_id},
                     {"python_stack_id", e.python_stack_id}});
    if (e.stack_id || e.python_stack_id) stacks.insert({e.stack_id, e.python_stack_id});
  });
  for (const Snapshot& s : t.snapshots)
    for (const DeviceSnapshot& d : s.devices)
      out.snapshots->row({{"process", p},
                          {"time_ns", s.time_ns},
                          {"reason", snapshot_reason_name(s.reason)},
                          {"device", d.device},
                          {"device_bytes", d.device_bytes},
                          {"peak_device_bytes", d.peak_device_bytes},
                          {"live_count", d.live_count},
                          {"arena_bytes", d.arena_bytes},
                          {"gap_bytes", d.gap_bytes},
                          {"largest_gap", d.largest_gap},
                          {"nvml_process_used", measured(d.nvml_process_used)},
                          {"nvml_device_free", measured(d.nvml_device_free)},
                          {"nvml_device_total", measured(d.nvml_device_total)},
                          {"pool_reserved_bytes", measured(d.pool_reserved_bytes)},
                          {"events_dropped", s.events_dropped}});
  for (const Mark& m : t.marks)
    out.marks->row({{"process", p},
                    {"time_ns", m.time_ns},
                    {"tid", m.tid},
                    {"source", mark_source_name(m.source)},
                    {"name", m.name}});
  ExportFrames named(t);
  for (const auto& [stack, python] : stacks) {
    const auto& fs = named.of(stack, python);
    for (size_t depth = 0; depth < fs.size(); ++depth) {
      const Frame& f = fs[depth];
      out.frames->row({{"process", p},
                       {"stack_id", stack},
                       {"python_stack_id", python},
                       {"depth", depth},
                       {"python", f.python},
                       {"function", f.function},
                       {"file", f.file},
                       {"line", f.line},
                       {"module", f.module},
                       {"ip", f.python ? 0 : f.ip},
                       {"label", describe(f, FrameStyle::kExport)}});
    }
  }
}

JsonlCounts JsonlTables::close() {
  Tables& t = *tables_;
  JsonlCounts c;
  for (auto* f :
       {t.processes.get(), t.devices.get(), t.events.get(), t.snapshots.get(), t.marks.get(), t.frames.get()}) {
    c.rows += f->close();
    ++c.files;
  }
  return c;
}

JsonlCounts write_jsonl(const std::string& dir, const std::vector<const Trace*>& traces, bool zstd) {
  std::vector<std::string> inputs;  // a table is never written over one of the traces
  for (const Trace* t : traces) inputs.push_back(t->path);
  JsonlTables tables(dir, inputs, zstd);
  for (const Trace* t : traces) tables.add(*t, MemoryEvents(t->events));
  return tables.close();
}

}  // namespace cumemtrace
