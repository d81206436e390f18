// Test-only: writes synthetic traces record by record, per trace_format.h, so that
// analysis tests can assert figures worked out by hand.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "cumemtrace/checksum.h"
#include "cumemtrace/trace_format.h"

namespace cumemtrace::test {

namespace fmt = cumemtrace::format;

// A snapshot flag: NVML's reading and the tracker's figures describe one moment.
inline constexpr uint32_t kSame = fmt::kMomentSame;

class TraceBuilder {
 public:
  static constexpr uint64_t kStart = 1'000'000'000;  // start_monotonic_ns of every test trace

  // From format 1.2 on, each record is sealed as a chunk of its own (as if flushed alone).
  // From 1.10 on, seals number their chunks for trace `trace_id`, as the library's do.
  static constexpr uint64_t kTraceId = 0x5eed0fc0ffee;
  explicit TraceBuilder(uint16_t minor = fmt::kVersionMinor, uint64_t trace_id = kTraceId) : seal_(minor >= 2) {
    fmt::FileHeader h{};
    std::memcpy(h.magic, fmt::kMagic, sizeof h.magic);
    h.version_major = fmt::kVersionMajor;
    h.version_minor = minor;
    h.header_bytes = sizeof h;
    if (minor >= 10) {
      h.trace_id = trace_id;
      chunk_.number_chunks(trace_id, 0);
    }
    put(bytes_, h);
    chunk_.update(&h, sizeof h);
  }

  // Records from here on are written without seals (a writer killed mid-flush).
  TraceBuilder& unsealed() {
    seal_ = false;
    return *this;
  }
  // Seals what was written since the last seal, as a flush does.
  TraceBuilder& seal() {
    bytes_ += chunk_.seal();
    return *this;
  }
  // Records until the next seal() form one chunk.
  TraceBuilder& batch() {
    seal_ = false;
    return *this;
  }

  TraceBuilder& process(uint64_t granule = 2ull << 20, std::vector<std::string> argv = {"prog", "--flag"},
                        int32_t rank = 0, const std::string& hostname = "host1") {
    return record(fmt::RecordType::kProcess, process_payload(granule, argv, rank, hostname));
  }

  // 1.8: a Process record with the launcher's facts; `launcher` is "NAME=value" entries.
  TraceBuilder& process_with_lineage(int32_t rank, int32_t local_rank, int32_t world_size,
                                     const std::vector<std::string>& launcher) {
    std::string p = process_payload(2ull << 20, {"prog"}, rank);
    p += pod(fmt::ProcessLineage{local_rank, world_size});
    std::string joined;
    for (size_t i = 0; i < launcher.size(); ++i) joined += (i ? std::string(1, '\0') : "") + launcher[i];
    str(p, joined);
    return record(fmt::RecordType::kProcess, p);
  }

  // 1.15: a Process record with no launcher entries and these framework variables
  // ("NAME=value" entries).
  TraceBuilder& process_with_environment(const std::vector<std::string>& environment) {
    std::string p = process_payload(2ull << 20, {"python", "train.py"}, -1);
    p += pod(fmt::ProcessLineage{-1, -1});
    str(p, "");
    std::string joined;
    for (size_t i = 0; i < environment.size(); ++i) joined += (i ? std::string(1, '\0') : "") + environment[i];
    str(p, joined);
    return record(fmt::RecordType::kProcess, p);
  }

  static std::string process_payload(uint64_t granule, const std::vector<std::string>& argv, int32_t rank,
                                     const std::string& hostname = "host1") {
    fmt::ProcessRecord r{};
    r.pid = 4242;
    r.ppid = 1;
    r.start_monotonic_ns = kStart;
    r.start_realtime_ns = 1'764'000'000'000'000'000ull;
    r.granule_bytes = granule;
    r.stack_depth = 64;
    r.rank = rank;
    std::string p = pod(r);
    std::string cmd;
    for (size_t i = 0; i < argv.size(); ++i) cmd += (i ? std::string(1, '\0') : "") + argv[i];
    str(p, hostname);
    str(p, cmd);
    str(p, "0.1.0");
    return p;
  }

  TraceBuilder& device(int32_t ordinal, uint64_t total, const std::string& name = "NVIDIA H200") {
    fmt::DeviceRecord r{};
    r.ordinal = ordinal;
    r.nvml_index = ordinal;
    r.total_bytes = total;
    std::string p = pod(r);
    str(p, name);
    return record(fmt::RecordType::kDevice, p);
  }

  TraceBuilder& module(uint64_t bias, uint64_t start, uint64_t end, const std::string& path,
                       const std::string& build_id = {}) {
    fmt::ModuleRecord r{bias, start, end};
    std::string p = pod(r);
    str(p, path);
    str(p, build_id);
    return record(fmt::RecordType::kModule, p);
  }

  TraceBuilder& stack(uint32_t id, uint32_t parent, uint64_t ip) {
    return record(fmt::RecordType::kStackNode, pod(fmt::StackNodeRecord{id, parent, ip}));
  }

  TraceBuilder& api(uint16_t id, const std::string& name) {
    std::string p = pod(fmt::ApiNameRecord{id});
    str(p, name);
    return record(fmt::RecordType::kApiName, p);
  }

  TraceBuilder& event(const fmt::EventRecord& e) {
    ++events_;
    return record(fmt::RecordType::kEvent, pod(e));
  }

  static fmt::EventRecord ev(uint64_t t, fmt::Op op, fmt::Kind kind, uint64_t address, uint64_t size,
                             int32_t device = 0, uint32_t stack = 0, uint16_t api = 0) {
    fmt::EventRecord e{};
    e.time_ns = kStart + t;
    e.op = uint8_t(op);
    e.kind = uint8_t(kind);
    e.address = address;
    e.size = size;
    e.device = device;
    e.stack_id = stack;
    e.api = api;
    e.tid = 7;
    return e;
  }

  TraceBuilder& alloc(uint64_t t, uint64_t address, uint64_t size, uint32_t stack = 0, int32_t device = 0,
                      fmt::Kind kind = fmt::Kind::kDevice, uint16_t api = 1) {
    return event(ev(t, fmt::Op::kAlloc, kind, address, size, device, stack, api));
  }
  TraceBuilder& free(uint64_t t, uint64_t address, int32_t device = 0, fmt::Kind kind = fmt::Kind::kDevice) {
    return event(ev(t, fmt::Op::kFree, kind, address, 0, device, 0, 2));
  }
  TraceBuilder& failed(uint64_t t, uint64_t size, int32_t result, uint32_t stack = 0, int32_t device = 0,
                       uint16_t api = 1) {
    auto e = ev(t, fmt::Op::kAlloc, fmt::Kind::kDevice, 0, size, device, stack, api);
    e.result = result;
    return event(e);
  }

  struct Dev {
    int32_t device = 0;
    uint64_t device_bytes = 0;
    uint64_t arena_bytes = 0;
    uint64_t nvml_used = fmt::kUnknown64;
    uint64_t nvml_free = fmt::kUnknown64;
    uint64_t nvml_total = fmt::kUnknown64;
    uint64_t pool_reserved = fmt::kUnknown64;
    uint64_t async_live = 0;
    uint32_t moment = 0;                        // fmt::MomentFlags (1.3)
    uint64_t graph_reserved = fmt::kUnknown64;  // 1.9: the graph memory pool (the others stay unknown)
  };
  TraceBuilder& snapshot(uint64_t t, fmt::SnapshotReason reason, const std::vector<Dev>& devs,
                         uint32_t entry_bytes = sizeof(fmt::DeviceSnapshot)) {
    fmt::SnapshotRecord r{};
    r.time_ns = kStart + t;
    r.reason = uint32_t(reason);
    r.device_count = uint32_t(devs.size());
    r.entry_bytes = entry_bytes;
    std::string p = pod(r);
    for (const auto& d : devs) {
      fmt::DeviceSnapshot s{};
      s.device = d.device;
      s.device_bytes = d.device_bytes;
      s.arena_bytes = d.arena_bytes;
      s.nvml_process_used = d.nvml_used;
      s.nvml_device_free = d.nvml_free;
      s.nvml_device_total = d.nvml_total;
      s.pool_reserved_bytes = d.pool_reserved;
      s.live_bytes[int(fmt::Kind::kAsyncPool)] = d.async_live;
      s.moment = d.moment;
      s.graph_used_current = s.graph_used_high = s.graph_reserved_high = fmt::kUnknown64;
      s.graph_reserved_current = d.graph_reserved;
      std::string e = pod(s);
      e.resize(entry_bytes, '\0');
      p += e;
    }
    return record(fmt::RecordType::kSnapshot, p);
  }

  TraceBuilder& symbol(uint64_t ip, const std::string& function, const std::string& file, uint32_t line) {
    std::string p = pod(fmt::SymbolRecord{ip, line, 0});
    str(p, function);
    str(p, file);
    return record(fmt::RecordType::kSymbol, p);
  }

  TraceBuilder& mark(uint64_t t, const std::string& name, fmt::MarkSource source = fmt::MarkSource::kApi,
                     uint32_t tid = 1) {
    std::string p = pod(fmt::MarkRecord{kStart + t, tid, uint8_t(source), {}});
    str(p, name);
    return record(fmt::RecordType::kMark, p);
  }
  // 1.10: an NVTX range named `name` ended (pop or end).
  TraceBuilder& range_end(uint64_t t, const std::string& name, fmt::MarkSource source = fmt::MarkSource::kNvtxPop,
                          uint32_t tid = 1) {
    std::string p = pod(fmt::MarkRecord{kStart + t, tid, uint8_t(source), {}});
    str(p, name);
    return record(fmt::RecordType::kRangeEnd, p);
  }

  // 1.12: a pool's NVTX memory-extension record (trace_format.h: NvtxMemRecord).
  TraceBuilder& nvtx_mem(uint64_t t, fmt::NvtxMemOp op, uint64_t heap, uint64_t address, uint64_t size = 0,
                         uint32_t stack = 0, const std::string& name = "", uint8_t usage = 0) {
    std::string p = pod(fmt::NvtxMemRecord{kStart + t, heap, address, size, 1, stack, 0, uint8_t(op), usage, 0});
    str(p, name);
    return record(fmt::RecordType::kNvtxMem, p);
  }

  // 1.14: the tracer did not keep `dropped` of kind `what` so far, `cap` kept at once.
  TraceBuilder& bounded(uint64_t t, uint32_t what, uint32_t cap, uint64_t dropped) {
    return record(fmt::RecordType::kBounded, pod(fmt::BoundedRecord{kStart + t, what, cap, dropped}));
  }

  // `written` defaults to the events written so far, as the library counts them.
  // 1.15: the End record of an exit with `status`.
  TraceBuilder& exit_end(uint64_t t, int32_t status) {
    std::string p = pod(fmt::EndRecord{kStart + t, events_, 0});
    p += pod(uint32_t(fmt::EndReason::kExit));
    str(p, "");
    p += pod(status);
    return record(fmt::RecordType::kEnd, p);
  }

  TraceBuilder& end(uint64_t t, std::optional<uint64_t> written = {}, uint64_t dropped = 0) {
    return record(fmt::RecordType::kEnd, pod(fmt::EndRecord{kStart + t, written.value_or(events_), dropped}));
  }

  TraceBuilder& record(fmt::RecordType type, const std::string& payload) { return raw(uint16_t(type), payload); }
  TraceBuilder& raw(uint16_t type, const std::string& payload) {
    fmt::RecordHeader h{type, 0, uint32_t(payload.size())};
    const size_t from = bytes_.size();
    put(bytes_, h);
    bytes_ += payload;
    chunk_.update(bytes_.data() + from, bytes_.size() - from);
    if (seal_) seal();
    return *this;
  }

  const std::string& bytes() const { return bytes_; }
  std::vector<uint8_t> vec() const { return {bytes_.begin(), bytes_.end()}; }

  void write(const std::string& path) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes_.data(), std::streamsize(bytes_.size()));
  }

  template <class T>
  static std::string pod(const T& v) {
    return std::string(reinterpret_cast<const char*>(&v), sizeof v);
  }
  static void str(std::string& out, const std::string& s) {
    uint32_t n = uint32_t(s.size());
    out.append(reinterpret_cast<const char*>(&n), 4);
    out += s;
  }

 private:
  template <class T>
  static void put(std::string& out, const T& v) {
    out += pod(v);
  }

  std::string bytes_;
  cumemtrace::ChunkHasher chunk_;
  bool seal_;
  uint64_t events_ = 0;
};

}  // namespace cumemtrace::test
