// Block records (trace format 1.13) of a trace read in passes (read/event_source.h): read
// again from the file at each scan like the events, never held in the Trace, each in its
// place among the events, on one thread and on two; and the report the same as from the
// trace held whole (docs/performance.md, "Block events in bounded memory").
#include <sstream>
#include <string>
#include <vector>

#include "catch.h"
#include "parse_built.h"
#include "read/event_source.h"
#include "render/report_json.h"
#include "reports/report.h"
#include "sizes.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;

namespace {

// Named apart: a batched build compiles this file with others (test/sizes.h).
constexpr uint64_t kPassesKiB = 1024, kPassesSeg = 0x7f0000000000;

void passes_block_source_on(TraceBuilder& b, uint64_t t) {
  fmt::BlockSourceRecord r{};
  r.time_ns = TraceBuilder::kStart + t, r.device = 0, r.flags = fmt::kBlockSourceUsageReports;
  r.allocator = uint8_t(fmt::BlockAllocator::kPyTorch), r.state = uint8_t(fmt::BlockSourceState::kOn);
  b.record(fmt::RecordType::kBlockSource, TraceBuilder::pod(r));
}

void passes_block(TraceBuilder& b, uint64_t t, fmt::BlockOp op, uint64_t address, uint64_t size, uint64_t allocated) {
  fmt::BlockEventRecord r{};
  r.time_ns = TraceBuilder::kStart + t, r.address = address, r.size = size, r.requested = fmt::kUnknown64,
  r.stream = fmt::kUnknown64;
  r.pool[0] = r.pool[1] = fmt::kUnknown64;
  r.allocated = allocated, r.reserved = 2 * MiB, r.tid = 7, r.stack_id = op == fmt::BlockOp::kAlloc ? 1 : 0;
  r.device = 0, r.op = uint8_t(op), r.flags = fmt::kBlockUsageReport;
  b.record(fmt::RecordType::kBlockEvent, TraceBuilder::pod(r));
}

// What one in-file-order scan gives: "e<index>" for an event, "b<index>@<events before>"
// for a block record.
std::string passes_in_order(const TraceFile& file) {
  std::ostringstream out;
  file.events().scan_in_file_order(
      file.trace(), [&](const Event&, size_t i) { out << 'e' << i << ' '; },
      [&](const BlockEvent& b, size_t i) { out << 'b' << i << '@' << b.events_before << ' '; });
  return out.str();
}

std::string passes_blocks_alone(const TraceFile& file) {
  std::ostringstream out;
  file.events().scan_blocks(file.trace(), [&](const BlockEvent& b, size_t i) {
    out << 'b' << i << '@' << b.time_ns - TraceBuilder::kStart << ' ';
  });
  return out.str();
}

}  // namespace

TEST_CASE("block passes: each record in its place among the events, never held") {
  // A 2 MiB segment, two 512 KiB blocks cut from it, a second segment, the first block
  // freed: allocated after each record 512 KiB, 1 MiB, 512 KiB.
  TraceBuilder b;
  b.process().device(0, 1ull << 40).stack(1, 0, 0x401000);
  passes_block_source_on(b, 50);
  b.alloc(100, kPassesSeg, 2 * MiB, 1);  // event 0
  passes_block(b, 110, fmt::BlockOp::kAlloc, kPassesSeg, 512 * kPassesKiB,
               512 * kPassesKiB);  // record 0, 1 event before
  passes_block(b, 120, fmt::BlockOp::kAlloc, kPassesSeg + 512 * kPassesKiB, 512 * kPassesKiB,
               1 * MiB);                           // record 1, 1 event before
  b.alloc(200, kPassesSeg + 2 * MiB, 2 * MiB, 1);  // event 1
  passes_block(b, 210, fmt::BlockOp::kFree, kPassesSeg, 512 * kPassesKiB,
               512 * kPassesKiB);  // record 2, 2 events before
  b.end(300);
  const std::string bytes = b.bytes();
  const auto span = cumemtrace::test::span_of(bytes);
  const TraceFile held(span, "t.trace"), one(span, "t.trace", 0, 1), two(span, "t.trace", 0, 2);
  // A file under the hold of bytes with more block records than it may hold (2 of 3): in
  // passes all the same.
  const TraceFile many(span, "t.trace", TraceFile::kHoldBytes, 2, /*hold_blocks=*/2);
  REQUIRE(held.holds_events());
  REQUIRE_FALSE(one.holds_events());
  REQUIRE_FALSE(many.holds_events());
  CHECK(held.trace().block_events.size() == 3);
  CHECK(one.trace().block_events.empty());
  CHECK(two.trace().block_events.empty());
  CHECK(many.trace().block_events.empty());
  CHECK(many.trace().events.size() == 0);
  CHECK(many.events().size() == 2);
  for (const TraceFile* f : {&held, &one, &two, &many}) {
    CHECK(passes_in_order(*f) == "e0 b0@1 b1@1 e1 b2@2 ");
    CHECK(passes_blocks_alone(*f) == "b0@110 b1@120 b2@210 ");
    const Report rep = build_report(f->trace(), f->events(), ReportOptions{});
    REQUIRE(rep.blocks.devices.size() == 1);
    const BlockDevice& d = rep.blocks.devices[0];
    CHECK(d.allocations == 2);
    CHECK(d.frees == 1);
    CHECK(d.peak_allocated == 1 * MiB);
    CHECK(d.peak_time_ns == TraceBuilder::kStart + 120);
    CHECK(d.end_allocated == 512 * kPassesKiB);
    CHECK(d.end_count == 1);
    CHECK(to_json(rep).dump() == to_json(build_report(held.trace(), held.events(), ReportOptions{})).dump());
    CHECK_FALSE(f->changed());
  }
}

TEST_CASE("block passes: records across many batches keep their places on two threads") {
  // 6,000 events, each followed by a block record: 12,000 records in file order, 2.9
  // batches of 4,096; block k comes after k + 1 events.
  TraceBuilder b;
  b.process().device(0, 1ull << 40).stack(1, 0, 0x401000);
  passes_block_source_on(b, 1);
  for (uint64_t k = 0; k < 6000; ++k) {
    b.alloc(10 * k + 2, kPassesSeg + 2 * MiB * k, 2 * MiB, 1);
    passes_block(b, 10 * k + 3, fmt::BlockOp::kAlloc, kPassesSeg + 2 * MiB * k, 4 * kPassesKiB,
                 4 * kPassesKiB * (k + 1));
  }
  b.end(60000);
  const std::string bytes = b.bytes();
  const auto span = cumemtrace::test::span_of(bytes);
  const TraceFile one(span, "t.trace", 0, 1), two(span, "t.trace", 0, 2);
  std::string expected;
  for (size_t k = 0; k < 6000; ++k)
    expected += "e" + std::to_string(k) + " b" + std::to_string(k) + "@" + std::to_string(k + 1) + " ";
  CHECK(passes_in_order(one) == expected);
  CHECK(passes_in_order(two) == expected);
  CHECK_FALSE(two.changed());
}
