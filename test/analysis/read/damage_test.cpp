// Damage is found, located and said: checksummed chunks (format 1.2), the plausibility
// check of older traces, the End record's count, dropped and impossible events.
#include <sstream>
#include <string>

#include "catch.h"
#include "reports/report.h"
#include "report_both.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "trace_builder.h"
#include "parse_built.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::report_both;
using cumemtrace::test::span_of;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;

namespace {

std::string text_of(const Trace& t) {
  std::ostringstream out;
  write_text(out, build_report(t, ReportOptions{}));
  return out.str();
}

// Three chunks, as three flushes would write them: the preamble; an allocation; a free
// and the End record. Offsets of the chunk boundaries are returned through `ends`.
std::string three_chunks(std::vector<uint64_t>& ends) {
  TraceBuilder b;
  b.batch().process().device(0, 80ull << 30).seal();
  ends.push_back(b.bytes().size());
  b.alloc(10, 0x7000000000, 4 * MiB).seal();
  ends.push_back(b.bytes().size());
  b.free(20, 0x7000000000).end(30, 2).seal();
  ends.push_back(b.bytes().size());
  return b.bytes();
}

}  // namespace

TEST_CASE("a sealed trace is read whole with every chunk's checksum verified") {
  std::vector<uint64_t> ends;
  const std::string bytes = three_chunks(ends);
  const Trace t = parse_trace(span_of(bytes));
  CHECK(t.sealed);
  CHECK(t.sealed_chunks == 3);
  CHECK(t.damage.empty());
  CHECK_FALSE(t.error);
  CHECK(t.events.size() == 2);
  CHECK(t.end);
  CHECK(t.records_end == bytes.size());
}

TEST_CASE("any one damaged byte of a chunk costs that chunk only, reported with its byte range") {
  std::vector<uint64_t> ends;
  const std::string good = three_chunks(ends);
  // Every byte of the middle chunk (the allocation, its seal included), set to every other value class.
  for (uint64_t at = ends[0]; at < ends[1]; ++at) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::string bad = good;
      bad[at] = char(bad[at] ^ flip);
      const Trace t = parse_trace(span_of(bad));
      INFO("byte " << at << " ^ " << int(flip));
      REQUIRE(t.damage.size() == 1);
      CHECK(t.damage[0].byte_offset == ends[0]);
      CHECK(t.damage[0].bytes == ends[1] - ends[0]);
      CHECK(t.sealed_chunks == 2);
      REQUIRE(t.events.size() == 1);  // the free, in the next good chunk
      CHECK(t.events[0].op == fmt::Op::kFree);
      CHECK(t.end);
    }
  }
}

TEST_CASE("a sealed trace cut at any byte keeps every chunk sealed before the cut") {
  std::vector<uint64_t> ends;
  const std::string full = three_chunks(ends);
  for (uint64_t cut = sizeof(fmt::FileHeader); cut < full.size(); ++cut) {
    const Trace t = parse_trace(span_of(full.substr(0, cut)));
    INFO("cut at " << cut);
    const uint64_t sealed_end = cut >= ends[1] ? ends[1] : cut >= ends[0] ? ends[0] : sizeof(fmt::FileHeader);
    CHECK(t.events.size() == (cut >= ends[1] ? 1u : 0u));
    CHECK(t.records_end == sealed_end);
    if (cut == sealed_end) {
      CHECK(t.damage.empty());
      continue;
    }
    REQUIRE(t.damage.size() == 1);
    CHECK(t.damage[0].byte_offset == sealed_end);
    CHECK(t.damage[0].byte_offset + t.damage[0].bytes == cut);
    REQUIRE(t.error);
    CHECK(t.error->truncated);
  }
}

TEST_CASE("a format 1.1 record whose length was changed is found and reading resumes after it") {
  TraceBuilder b(1);
  b.process().device(0, 80ull << 30);
  for (int i = 0; i < 4; ++i) b.alloc(10 + i, 0x7000000000 + i * 4 * MiB, MiB);
  const uint64_t damaged_at = b.bytes().size();
  b.alloc(20, 0x7100000000, MiB);
  for (int i = 0; i < 5; ++i) b.alloc(30 + i, 0x7200000000 + i * 4 * MiB, MiB);
  b.end(40);
  std::string bytes = b.bytes();
  const uint32_t swallow = 64 + 3 * 72;  // the length now covers three more events
  std::memcpy(&bytes[damaged_at + 4], &swallow, 4);
  const Trace t = parse_trace(span_of(bytes));
  REQUIRE(t.damage.size() == 1);
  CHECK(t.damage[0].byte_offset == damaged_at);
  CHECK(t.damage[0].bytes == 72);
  CHECK(t.events.size() == 9);  // 10 written, the damaged one lost, none swallowed
  CHECK(t.end);
  const std::string s = text_of(t);
  CHECK(s.find("DAMAGED: 72 B at byte " + std::to_string(damaged_at)) != std::string::npos);
  CHECK(s.find("END RECORD MISMATCH: it counts 10 events written, 9 were read") != std::string::npos);
  CHECK(s.find("FIGURES ARE INCOMPLETE") != std::string::npos);
}

TEST_CASE("a format 1.1 record of a type its writer never wrote is damage") {
  TraceBuilder b(1);
  b.process();
  const uint64_t at = b.bytes().size();
  b.raw(77, std::string(16, '\0'));
  b.alloc(10, 0x7000000000, MiB).alloc(11, 0x7000100000, MiB).alloc(12, 0x7000200000, MiB).end(20);
  const Trace t = parse_trace(span_of(b.bytes()));
  REQUIRE(t.damage.size() == 1);
  CHECK(t.damage[0].byte_offset == at);
  CHECK(t.damage[0].bytes == 24);
  CHECK(t.events.size() == 3);
}

TEST_CASE("impossible events are flagged and left out of every figure") {
  TraceBuilder b;
  b.process().device(0, 8ull << 30);
  b.alloc(10, 0x7000000000, 2 * MiB);
  b.event(TraceBuilder::ev(0, fmt::Op::kAlloc, fmt::Kind::kDevice, 0x7100000000, 9ull << 30));  // > the device
  fmt::EventRecord early = TraceBuilder::ev(0, fmt::Op::kAlloc, fmt::Kind::kDevice, 0x7200000000, MiB);
  early.time_ns = TraceBuilder::kStart - 1;  // before tracing began
  b.event(early);
  b.end(30);
  const Report rep = report_both(b);
  REQUIRE(rep.integrity.impossible.size() == 2);
  CHECK(rep.integrity.impossible[0].index == 1);
  CHECK(rep.integrity.impossible[1].index == 2);
  REQUIRE(rep.devices.size() == 1);
  CHECK(rep.devices[0].peak_bytes == 2 * MiB);
  CHECK(rep.events == 3);
  const auto j = to_json(rep);
  CHECK(j["integrity"]["impossible_events"].size() == 2);
  CHECK(j["integrity"]["figures_complete"] == false);
}

TEST_CASE("events dropped by the writer make the figures lower bounds, with the exit snapshot beside") {
  TraceBuilder b;
  b.process().device(0, 80ull << 30);
  b.alloc(10, 0x7000000000, 2 * MiB);
  b.snapshot(20, fmt::SnapshotReason::kExit, {{0, 6 * MiB, 6 * MiB}});
  b.end(30, std::nullopt, 7);
  const Report rep = report_both(b);
  CHECK(rep.integrity.events_dropped == 7);
  REQUIRE(rep.devices.size() == 1);
  REQUIRE(rep.devices[0].exit_snapshot);
  CHECK(rep.devices[0].exit_snapshot->device_bytes == 6 * MiB);
  std::ostringstream out;
  write_text(out, rep);
  CHECK(out.str().find("peak requested device bytes (at least): 2.00 MiB") != std::string::npos);
  CHECK(out.str().find("requested device bytes 6.00 MiB (6,291,456 B)") != std::string::npos);
  CHECK(to_json(rep)["devices"][0]["exit_snapshot"]["device_bytes"] == 6 * MiB);
}

TEST_CASE("an allocation whose range runs past the end of the address space is impossible") {
  TraceBuilder b;
  b.process();  // no Device record: its size cannot be judged against the device
  b.alloc(10, 0xfffffffffff00000ull, 2 * MiB).alloc(20, 0x7000000000, MiB).end(30);
  const Report rep = report_both(b);
  REQUIRE(rep.integrity.impossible.size() == 1);
  CHECK(rep.integrity.impossible[0].index == 0);
  CHECK(rep.integrity.impossible[0].why == "range at 0xfffffffffff00000 of 2097152 bytes runs past the end of memory");
  REQUIRE(rep.devices.size() == 1);
  CHECK(rep.devices[0].peak_bytes == MiB);
}
