#include <cstddef>
#include "read/reader.h"

#include <string>

#include "catch.h"
#include "trace_builder.h"
#include "parse_built.h"

using namespace cumemtrace;
using cumemtrace::test::span_of;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;

namespace {

TraceBuilder small_trace(uint16_t minor = fmt::kVersionMinor) {
  TraceBuilder b(minor);
  b.process()
      .device(0, 80ull << 30)
      .api(1, "cudaMalloc")
      .module(0x400000, 0x400000, 0x500000, "/opt/prog", "\x01\x02")
      .stack(1, 0, 0x401000)
      .alloc(10, 0x7000000000, 4096, 1)
      .snapshot(20, fmt::SnapshotReason::kPeriodic, {{0, 4096, 2 << 20, 100, 50, 80ull << 30}})
      .free(30, 0x7000000000)
      .symbol(0x401000, "main", "prog.cpp", 12)
      .end(40, 2);
  return b;
}

}  // namespace

TEST_CASE("a valid trace is read whole, every record in place") {
  const auto b = small_trace();
  Trace t = parse_trace(span_of(b.bytes()));
  REQUIRE_FALSE(t.error);
  REQUIRE(t.header_ok);
  REQUIRE(t.process);
  CHECK(t.process->pid == 4242);
  CHECK(t.process->argv == std::vector<std::string>{"prog", "--flag"});
  CHECK(t.process->hostname == "host1");
  CHECK(t.devices.size() == 1);
  CHECK(t.devices[0].name == "NVIDIA H200");
  CHECK(t.api_name(1) == "cudaMalloc");
  CHECK(t.api_name(9) == "api#9");
  CHECK(t.modules.at(0).build_id == std::string("\x01\x02"));
  CHECK(t.stack_nodes.at(1).ip == 0x401000);
  REQUIRE(t.events.size() == 2);
  CHECK(t.events[0].op == fmt::Op::kAlloc);
  CHECK(t.events[0].size == 4096);
  REQUIRE(t.snapshots.size() == 1);
  CHECK(t.snapshots[0].devices.at(0).nvml_device_free == 50);
  CHECK(t.symbols.at(0x401000).line == 12);
  REQUIRE(t.end);
  CHECK(t.records_end == b.bytes().size());
}

TEST_CASE("a format 1.1 trace cut at any byte never crashes and names the offset of the cut record") {
  const std::string full = small_trace(1).bytes();
  // Offsets where a record starts: a cut exactly there leaves a well-formed prefix.
  std::vector<uint64_t> starts;
  for (uint64_t off = sizeof(fmt::FileHeader); off < full.size();) {
    starts.push_back(off);
    fmt::RecordHeader h;
    std::memcpy(&h, full.data() + off, sizeof h);
    off += sizeof h + h.payload_bytes;
  }
  for (size_t cut = 0; cut < full.size(); ++cut) {
    const std::string part = full.substr(0, cut);
    Trace t = parse_trace(span_of(part));
    INFO("cut at " << cut);
    if (cut < sizeof(fmt::FileHeader)) {
      REQUIRE(t.error);
      CHECK_FALSE(t.header_ok);
      continue;
    }
    CHECK(t.header_ok);
    const bool at_boundary =
        std::find(starts.begin(), starts.end(), cut) != starts.end() || cut == sizeof(fmt::FileHeader);
    if (at_boundary) {
      CHECK_FALSE(t.error);
      CHECK(t.records_end == cut);
      continue;
    }
    REQUIRE(t.error);
    CHECK(t.error->truncated);
    // The error names the start of the record that was cut, which is where reading stopped.
    CHECK(t.error->byte_offset == t.records_end);
    CHECK(t.error->message.find("at byte " + std::to_string(t.records_end)) != std::string::npos);
    CHECK_FALSE(t.end);
  }
}

TEST_CASE("the truncation message says what was announced and what was left") {
  TraceBuilder b(1);
  b.process();
  const uint64_t at = b.bytes().size();
  b.alloc(1, 0x1000, 64);
  const std::string cut = b.bytes().substr(0, at + 8 + 12);
  Trace t = parse_trace(span_of(cut));
  REQUIRE(t.error);
  CHECK(t.error->message ==
        "truncated record at byte " + std::to_string(at) + ": payload of 64 bytes announced, 12 left");
}

TEST_CASE("bad magic and unknown major version are refused at once") {
  std::string bytes = small_trace().bytes();
  std::string bad = bytes;
  bad[0] = 'X';
  Trace t = parse_trace(span_of(bad));
  REQUIRE(t.error);
  CHECK_FALSE(t.header_ok);
  CHECK(t.error->message.find("bad magic") != std::string::npos);

  std::string major = bytes;
  major[8] = 2;
  Trace m = parse_trace(span_of(major));
  REQUIRE(m.error);
  CHECK_FALSE(m.header_ok);
  CHECK(m.error->message.find("unknown major version 2") != std::string::npos);
  CHECK(m.events.empty());
}

TEST_CASE("a later minor version with an unknown record type and longer payloads is read") {
  TraceBuilder b(7);
  b.process();
  b.raw(999, std::string(40, '\x5a'));  // a record type from the future
  auto e = TraceBuilder::ev(5, fmt::Op::kAlloc, fmt::Kind::kDevice, 0x2000, 512);
  b.record(fmt::RecordType::kEvent, TraceBuilder::pod(e) + std::string(16, '\x11'));  // appended fields
  b.snapshot(6, fmt::SnapshotReason::kPeriodic, {{0, 512, 2 << 20, 7, 8, 9}}, sizeof(fmt::DeviceSnapshot) + 24);
  b.end(9);
  Trace t = parse_trace(span_of(b.bytes()));
  REQUIRE_FALSE(t.error);
  CHECK(t.version_minor == 7);
  CHECK(t.unknown_records == 1);
  REQUIRE(t.events.size() == 1);
  CHECK(t.events[0].address == 0x2000);
  CHECK(t.events[0].size == 512);
  REQUIRE(t.snapshots.size() == 1);
  CHECK(t.snapshots[0].devices.at(0).nvml_device_total == 9);
  CHECK(t.end);
}

TEST_CASE("shorter payloads from older writers leave missing fields absent") {
  TraceBuilder b;
  b.process();
  auto e = TraceBuilder::ev(5, fmt::Op::kAlloc, fmt::Kind::kDevice, 0x2000, 512);
  b.record(fmt::RecordType::kEvent, TraceBuilder::pod(e).substr(0, 24));  // time, address, size only
  // A snapshot entry without the NVML fields (nor the pool figure of 1.1): "not measured".
  b.snapshot(6, fmt::SnapshotReason::kPeriodic, {{0, 512, 2 << 20, 7, 8, 9}},
             offsetof(fmt::DeviceSnapshot, nvml_process_used));
  Trace t = parse_trace(span_of(b.bytes()));
  REQUIRE_FALSE(t.error);
  REQUIRE(t.events.size() == 1);
  CHECK(t.events[0].size == 512);
  CHECK(t.events[0].device == -1);
  CHECK(t.events[0].stack_id == 0);
  const auto& d = t.snapshots.at(0).devices.at(0);
  CHECK(d.arena_bytes == (2u << 20));
  CHECK(d.nvml_process_used == fmt::kUnknown64);
  CHECK(d.nvml_device_total == fmt::kUnknown64);
  CHECK(d.pool_reserved_bytes == fmt::kUnknown64);
}

TEST_CASE("an absurd payload size or a bad string length stops reading there") {
  TraceBuilder b(1);
  b.process();
  const uint64_t at = b.bytes().size();
  fmt::RecordHeader h{uint16_t(fmt::RecordType::kEvent), 0, 0xfffffff0u};
  std::string bytes = b.bytes() + TraceBuilder::pod(h) + std::string(100, '\0');
  Trace t = parse_trace(span_of(bytes));
  REQUIRE(t.error);
  CHECK_FALSE(t.error->truncated);
  CHECK(t.error->byte_offset == at);
  CHECK(t.error->message.find("absurd payload size") != std::string::npos);
  CHECK(t.process);

  TraceBuilder s;
  s.process();
  const uint64_t at2 = s.bytes().size();
  std::string payload = TraceBuilder::pod(fmt::ModuleRecord{0, 0, 0});
  const uint32_t huge = 1000;
  payload.append(reinterpret_cast<const char*>(&huge), 4);
  payload += "short";
  s.record(fmt::RecordType::kModule, payload);
  Trace u = parse_trace(span_of(s.bytes()));
  REQUIRE(u.error);
  CHECK(u.error->byte_offset == at2);
  CHECK(u.error->message.find("bad string length") != std::string::npos);
  CHECK(u.modules.empty());
}

TEST_CASE("random damage never crashes the reader") {
  const std::string full = small_trace().bytes();
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int round = 0; round < 2000; ++round) {
    std::string bytes = full;
    for (int k = 0; k < 4; ++k) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      bytes[x % bytes.size()] = char(x >> 32);
    }
    Trace t = parse_trace(span_of(bytes));
    CHECK(t.records_end <= bytes.size());
  }
}

TEST_CASE("an unreadable path is an error at byte 0") {
  Trace t = read_trace("/nonexistent/trace");
  REQUIRE(t.error);
  CHECK(t.error->byte_offset == 0);
  CHECK_FALSE(t.header_ok);
}

namespace {

// An AllocatorSegments payload: one segment of `blocks` blocks starting at block `first`.
std::string allocator_segments(uint32_t first, uint32_t seg_blocks, std::vector<fmt::AllocatorBlock> blocks) {
  std::string p = TraceBuilder::pod(fmt::AllocatorSegmentsRecord{
      123, 0, 1, uint32_t(blocks.size()), sizeof(fmt::AllocatorSegment), sizeof(fmt::AllocatorBlock), 0});
  TraceBuilder::str(p, "pytorch");
  p += TraceBuilder::pod(fmt::AllocatorSegment{0x7000000000, 3 << 20, 1 << 20, 7, first, seg_blocks, 1, 0});
  for (const auto& b : blocks) p += TraceBuilder::pod(b);
  return p;
}

}  // namespace

TEST_CASE("an allocator's block map is read in event order, and a damaged one is skipped without stopping") {
  const std::vector<fmt::AllocatorBlock> blocks = {{1 << 20, uint32_t(fmt::BlockState::kActiveAllocated), 0},
                                                   {2 << 20, uint32_t(fmt::BlockState::kInactive), 0}};
  TraceBuilder b;
  b.process().device(0, 80ull << 30).alloc(10, 0x7000000000, 3 << 20);
  b.record(fmt::RecordType::kAllocatorSegments, allocator_segments(0, 2, blocks));
  b.record(fmt::RecordType::kAllocatorSegments, allocator_segments(1, 2, blocks));  // blocks 1..2 of 2: damaged
  b.free(20, 0x7000000000).end(30, 2);
  Trace t = parse_trace(span_of(b.bytes()));
  REQUIRE_FALSE(t.error);
  CHECK(t.damaged_records == 1);
  CHECK(t.events.size() == 2);
  REQUIRE(t.allocator_maps.size() == 1);
  const AllocatorMap& m = t.allocator_maps[0];
  CHECK(m.allocator == "pytorch");
  CHECK(m.events_before == 1);
  REQUIRE(m.segments.size() == 1);
  CHECK(m.segments[0].address == 0x7000000000);
  CHECK(m.segments[0].stream == 7);
  CHECK(m.segments[0].flags == fmt::kSegmentSmall);
  REQUIRE(m.segments[0].blocks.size() == 2);
  CHECK(m.segments[0].blocks[1].size == 2 << 20);
  CHECK(m.segments[0].blocks[1].state == fmt::BlockState::kInactive);
}

TEST_CASE("1.6: Python names and frames are read, and an event's Python stack (a 64-byte event has none)") {
  TraceBuilder b;
  b.process();
  for (auto [id, text] : {std::pair<uint32_t, std::string>{1, "/w/train.py"}, {2, "forward"}, {3, "<module>"}}) {
    std::string p = TraceBuilder::pod(fmt::PyStringRecord{id});
    TraceBuilder::str(p, text);
    b.record(fmt::RecordType::kPyString, p);
  }
  b.record(fmt::RecordType::kPyFrame, TraceBuilder::pod(fmt::PyFrameRecord{1, 0, 1, 3, 120, fmt::kPyFrameEntry}));
  b.record(fmt::RecordType::kPyFrame, TraceBuilder::pod(fmt::PyFrameRecord{2, 1, 1, 2, 88, 0}));
  const auto e = TraceBuilder::ev(5, fmt::Op::kAlloc, fmt::Kind::kDevice, 0x2000, 512);
  b.record(fmt::RecordType::kEvent, TraceBuilder::pod(e) + TraceBuilder::pod(fmt::EventPython{2}));
  b.alloc(6, 0x4000, 512);
  Trace t = parse_trace(span_of(b.bytes()));
  REQUIRE_FALSE(t.error);
  CHECK(t.py_strings == std::unordered_map<uint32_t, std::string>{{1, "/w/train.py"}, {2, "forward"}, {3, "<module>"}});
  REQUIRE(t.py_frames.size() == 2);
  const PyFrameNode& inner = t.py_frames.at(2);
  CHECK(inner.parent == 1);
  CHECK(inner.file == 1);
  CHECK(inner.function == 2);
  CHECK(inner.line == 88);
  CHECK(inner.flags == 0);
  CHECK(t.py_frames.at(1).flags == fmt::kPyFrameEntry);
  REQUIRE(t.events.size() == 2);
  CHECK(t.events[0].address == 0x2000);
  CHECK(t.events[0].python_stack_id == 2);
  CHECK(t.events[1].address == 0x4000);
  CHECK(t.events[1].python_stack_id == 0);
}

TEST_CASE("a 1.8 Process record carries the launcher's facts, and a 1.7 one reads as none set") {
  TraceBuilder b;
  b.process_with_lineage(3, 1, 8, {"SLURM_JOB_ID=777", "SLURM_STEP_ID=0", "MASTER_ADDR=node1"});
  const Trace t = parse_trace(span_of(b.bytes()));
  REQUIRE(t.process);
  CHECK(t.process->rank == 3);
  CHECK(t.process->local_rank == 1);
  CHECK(t.process->world_size == 8);
  REQUIRE(t.process->launcher.size() == 3);
  CHECK(t.process->launcher[0] == std::pair<std::string, std::string>{"SLURM_JOB_ID", "777"});
  CHECK(t.process->launcher[2] == std::pair<std::string, std::string>{"MASTER_ADDR", "node1"});
  CHECK(*t.process->launcher_value("SLURM_STEP_ID") == "0");
  CHECK(t.process->launcher_value("RANK") == nullptr);

  TraceBuilder old(7);
  old.process();
  const Trace o = parse_trace(span_of(old.bytes()));
  REQUIRE(o.process);
  CHECK(o.process->hostname == "host1");
  CHECK(o.process->local_rank == -1);
  CHECK(o.process->world_size == -1);
  CHECK(o.process->launcher.empty());
}

TEST_CASE("1.9 snapshot entries carry the graph memory pool, and 1.8 entries leave it unknown") {
  TraceBuilder b;
  b.process();
  TraceBuilder::Dev d{.device = 0, .graph_reserved = 3ull << 30};
  b.snapshot(6, fmt::SnapshotReason::kPeriodic, {d});
  // A 1.8 writer's entry ends at reserved2.
  b.snapshot(7, fmt::SnapshotReason::kPeriodic, {d}, offsetof(fmt::DeviceSnapshot, graph_used_current));
  Trace t = parse_trace(span_of(b.bytes()));
  REQUIRE_FALSE(t.error);
  REQUIRE(t.snapshots.size() == 2);
  CHECK(t.snapshots[0].devices.at(0).graph_reserved_current == (3ull << 30));
  CHECK(t.snapshots[0].devices.at(0).graph_used_current == fmt::kUnknown64);
  CHECK(t.snapshots[1].devices.at(0).graph_reserved_current == fmt::kUnknown64);
  CHECK(t.snapshots[1].devices.at(0).graph_reserved_high == fmt::kUnknown64);
}
