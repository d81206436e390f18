// Values no trace can hold are set aside by the reader, once, for every command (plausible.h):
// a crafted event or record with valid checksums is said as damage, its figures incomplete,
// and no command counts it (issue 29: one event of device ordinal 2147483647 made
// `export --format memviz` list two billion devices until bad_alloc).
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "catch.h"
#include "render/export/memviz.h"
#include "reports/report.h"
#include "render/report_json.h"
#include "shell.h"
#include "parse_built.h"
#include "trace_builder.h"
#include "temp_dir.h"
#include "memviz_python.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::load_with_python;
using cumemtrace::test::read_file;
using cumemtrace::test::span_of;
using cumemtrace::test::TraceBuilder;
using json = nlohmann::json;
namespace fmt = cumemtrace::format;

namespace {

constexpr int32_t kHugeOrdinal = 2147483647;

std::string plausible_path(const std::string& name) {
  return "/tmp/cumemtrace_plausible_test_" + std::to_string(getpid()) + "_" + name;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

// 1 MiB on device 0, then 2 MiB on `ordinal`, then a free of the first, and the End.
TraceBuilder one_crafted_event(int32_t ordinal) {
  TraceBuilder b;
  b.process().device(0, 80ull << 30);
  b.alloc(10, 0x7000000000, MiB);
  b.alloc(20, 0x7100000000, 2 * MiB, 0, ordinal);
  b.free(30, 0x7000000000);
  b.end(40);
  return b;
}

}  // namespace

TEST_CASE("an event of device ordinal 2147483647 is set aside by the reader and said, for every command") {
  const std::string bytes = one_crafted_event(kHugeOrdinal).bytes();
  const Trace t = parse_trace(span_of(bytes), "crafted.trace");
  CHECK(t.damage.empty());  // every checksum matches
  REQUIRE(t.set_aside.size() == 1);
  CHECK(t.set_aside[0].index == 1);
  CHECK(t.set_aside[0].event.device == kHugeOrdinal);
  CHECK(t.set_aside[0].why == "device ordinal 2147483647 is no device's (-1 to 1023)");
  REQUIRE(t.events.size() == 2);  // the others, as written
  CHECK(t.events[1].op == fmt::Op::kFree);

  const json j = to_json(build_report(t, ReportOptions{}));
  CHECK(j["integrity"]["figures_complete"] == false);
  REQUIRE(j["integrity"]["impossible_events"].size() == 1);
  CHECK(j["integrity"]["impossible_events"][0]["event_index"] == 1);
  CHECK(j["integrity"]["end_record_mismatch"].is_null());  // 3 written, 3 read (one set aside)

  // memviz: one device's list, bounded output; the command itself finishes and says nothing is wrong with -o.
  std::ostringstream out;
  const MemvizCounts c = write_memviz(out, t);
  CHECK(c.events == 5);  // segment_alloc, alloc, and the free's three
  CHECK(c.segments == 0);
  CHECK(out.str().size() < 4096);
  const std::string trace_path = plausible_path("crafted.trace"), pickle = plausible_path("crafted.pickle");
  write_file(trace_path, bytes);
  const auto r =
      test::shell(std::string(CUMEMTRACE_CLI) + " export --format memviz " + trace_path + " -o " + pickle + " 2>&1");
  CHECK(r.status == 0);
  const json got = load_with_python(pickle);
  CHECK(got["snapshot"]["device_traces"].size() == 1);
  CHECK(read_file(pickle).size() < 4096);
  std::remove(trace_path.c_str());
  std::remove(pickle.c_str());
}

TEST_CASE("every event field a command uses is judged: ordinals both ways, op, kind, time") {
  struct Case {
    const char* name;
    fmt::EventRecord e;
    std::string why;
  };
  // A 1 MiB allocation at 20 ns with one field changed.
  const auto with = [](auto change) {
    auto e = TraceBuilder::ev(20, fmt::Op::kAlloc, fmt::Kind::kDevice, 0x7100000000, MiB);
    change(e);
    return e;
  };
  const uint64_t late = TraceBuilder::kStart + 11ull * 366 * 24 * 3600 * 1'000'000'000ull;
  const std::vector<Case> cases = {
      {"ordinal -2", with([](auto& e) { e.device = -2; }), "device ordinal -2 is no device's (-1 to 1023)"},
      {"ordinal 1024", with([](auto& e) { e.device = 1024; }), "device ordinal 1024 is no device's (-1 to 1023)"},
      {"op 255", with([](auto& e) { e.op = 255; }), "operation 255 is none this format has"},
      {"op 14", with([](auto& e) { e.op = 14; }), "operation 14 is none this format has"},
      {"kind 12", with([](auto& e) { e.kind = 12; }), "kind 12 is none this format has"},
      {"eleven years on", with([&](auto& e) { e.time_ns = late; }),
       "time " + std::to_string(late) + " ns is more than ten years after the trace began (" +
           std::to_string(TraceBuilder::kStart) + " ns)"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    TraceBuilder b;
    b.process().device(0, 80ull << 30).alloc(10, 0x7000000000, MiB).event(c.e).end(40);
    const Trace t = parse_trace(span_of(b.bytes()));
    REQUIRE(t.set_aside.size() == 1);
    CHECK(t.set_aside[0].why == c.why);
    CHECK(t.events.size() == 1);
  }
  // The edges that can be: ordinal -1 (host) and 1023, ten years less a second.
  TraceBuilder b;
  b.process().device(0, 80ull << 30);
  b.alloc(10, 0x7000000000, MiB, 0, -1, fmt::Kind::kHostPinned).alloc(11, 0x7100000000, MiB, 0, 1023);
  b.alloc(10ull * 366 * 24 * 3600 * 1'000'000'000ull - 1'000'000'000ull, 0x7200000000, MiB);
  const Trace t = parse_trace(span_of(b.bytes()));
  CHECK(t.set_aside.empty());
  CHECK(t.events.size() == 3);
}

TEST_CASE("a Device record, snapshot entry or GPU list of an impossible ordinal is damage at its offset") {
  TraceBuilder b;
  b.process().device(0, 80ull << 30);
  const uint64_t device_at = b.bytes().size();
  b.device(kHugeOrdinal, 80ull << 30);
  b.alloc(10, 0x7000000000, MiB);
  const uint64_t snapshot_at = b.bytes().size();
  b.snapshot(20, fmt::SnapshotReason::kPeriodic, {{.device = 0, .device_bytes = MiB}, {.device = kHugeOrdinal}});
  b.end(30);
  const Trace t = parse_trace(span_of(b.bytes()));
  REQUIRE(t.damage.size() == 2);
  CHECK(t.damage[0].byte_offset == device_at);
  CHECK(t.damage[0].message ==
        "a Device record of ordinal 2147483647 at byte " + std::to_string(device_at) + ": no device has it; set aside");
  CHECK(t.damage[1].byte_offset == snapshot_at);
  CHECK(t.damage[1].message.find("a snapshot entry of device ordinal 2147483647") == 0);
  REQUIRE(t.devices.size() == 1);
  CHECK(t.devices[0].ordinal == 0);
  REQUIRE(t.snapshots.size() == 1);
  REQUIRE(t.snapshots[0].devices.size() == 1);
  CHECK(t.snapshots[0].devices[0].device == 0);
  CHECK(to_json(build_report(t, ReportOptions{}))["integrity"]["figures_complete"] == false);
  std::ostringstream out;
  write_memviz(out, t);
  CHECK(out.str().size() < 4096);
}
