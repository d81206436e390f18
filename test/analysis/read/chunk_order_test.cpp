// Trace format 1.10: every chunk carries its number and its trace's id under its checksum,
// so chunks swapped, repeated, dropped or spliced in from another trace (each checksum still
// matching) are found, said at their byte offsets, and make the figures incomplete.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "catch.h"
#include "read/event_source.h"
#include "reports/report.h"
#include "render/report_json.h"
#include "shell.h"
#include "parse_built.h"
#include "trace_builder.h"
#include "base/text.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::span_of;
using cumemtrace::test::TraceBuilder;
using json = nlohmann::json;
namespace fmt = cumemtrace::format;

namespace {

// Five chunks, as five flushes write them: 0 the preamble; 1 an allocation of 3 MiB;
// 2 its free; 3 another 3 MiB at the same address, never freed (a leak); 4 the End record.
std::vector<std::string> five_chunks(uint16_t minor = fmt::kVersionMinor, uint64_t id = TraceBuilder::kTraceId) {
  TraceBuilder b(minor, id);
  std::vector<std::string> chunks;
  size_t from = 0;
  const auto cut = [&] {
    b.seal();
    chunks.push_back(b.bytes().substr(from));
    from = b.bytes().size();
  };
  b.batch().process().device(0, 80ull << 30);
  cut();
  b.alloc(10, 0x7000000000, 3 * MiB);
  cut();
  b.free(20, 0x7000000000);
  cut();
  b.alloc(30, 0x7000000000, 3 * MiB);
  cut();
  b.end(40, 3);
  cut();
  return chunks;
}

std::string join(const std::vector<std::string>& chunks, const std::vector<int>& order) {
  std::string out;
  for (int i : order) out += chunks[size_t(i)];
  return out;
}

uint64_t offset_of(const std::vector<std::string>& chunks, const std::vector<int>& order, size_t position) {
  uint64_t at = 0;
  for (size_t k = 0; k < position; ++k) at += chunks[size_t(order[k])].size();
  return at;
}

json report_of(const Trace& t) { return to_json(build_report(t, ReportOptions{})); }

// `cumemtrace check --max-leaked 0` on the bytes: its exit status and what it wrote.
test::Result check_no_leak(const std::string& bytes) {
  const std::string path = "/tmp/cumemtrace_chunk_order_" + std::to_string(getpid()) + ".trace";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
  }
  auto r = test::shell(std::string(CUMEMTRACE_CLI) + " check --max-leaked 0 " + path + " 2>&1");
  ::unlink(path.c_str());
  return r;
}

}  // namespace

TEST_CASE("1.10: chunks in the order written read clean, and the leak is there") {
  const auto c = five_chunks();
  const Trace t = parse_trace(span_of(join(c, {0, 1, 2, 3, 4})));
  CHECK(t.damage.empty());
  CHECK(t.events.size() == 3);
  CHECK(t.trace_id == TraceBuilder::kTraceId);
  CHECK(t.last_chunk_sequence == 4u);
  const json j = report_of(t);
  CHECK(j["integrity"]["figures_complete"] == true);
  CHECK(check_no_leak(join(c, {0, 1, 2, 3, 4})).status == 1);  // 3 MiB leaked
}

TEST_CASE("1.10: two adjacent chunks swapped are found at their offsets, the late one set aside") {
  const auto c = five_chunks();
  // Every adjacent pair after the preamble: the second's gap, then the first out of order.
  for (int a = 1; a + 1 < 5; ++a) {
    std::vector<int> order = {0, 1, 2, 3, 4};
    std::swap(order[size_t(a)], order[size_t(a) + 1]);
    INFO("chunks " << a << " and " << a + 1 << " swapped");
    const std::string bytes = join(c, order);
    const Trace t = parse_trace(span_of(bytes));
    REQUIRE(t.damage.size() == 2);
    CHECK(t.damage[0].byte_offset == offset_of(c, order, size_t(a)));
    CHECK(t.damage[0].bytes == 0);
    CHECK(has(t.damage[0].message, "chunk " + std::to_string(a) + " missing before the chunk at bytes " +
                                       std::to_string(offset_of(c, order, size_t(a)))));
    CHECK(t.damage[1].byte_offset == offset_of(c, order, size_t(a) + 1));
    CHECK(t.damage[1].bytes == c[size_t(a)].size());
    CHECK(has(t.damage[1].message, "is chunk " + std::to_string(a) + ", out of order (after chunk " +
                                       std::to_string(a + 1) + "): set aside"));
    CHECK(t.events.size() == 2);  // the late chunk's event is not read
    const json j = report_of(t);
    CHECK(j["integrity"]["figures_complete"] == false);
    CHECK(j["integrity"]["damaged_ranges"].size() == 2);
  }
  // Chunks 2 and 3 swapped: read as written, the leak would disappear (alloc, alloc, free).
  const std::string swapped = join(c, {0, 1, 3, 2, 4});
  CHECK(check_no_leak(swapped).status != 0);
}

TEST_CASE("1.10: a chunk repeated is found at its offset and set aside, its events counted once") {
  const auto c = five_chunks();
  for (int k = 1; k < 5; ++k) {
    std::vector<int> order = {0, 1, 2, 3, 4};
    order.insert(order.begin() + k + 1, k);  // right after itself
    INFO("chunk " << k << " repeated");
    const Trace t = parse_trace(span_of(join(c, order)));
    REQUIRE(t.damage.size() == 1);
    CHECK(t.damage[0].byte_offset == offset_of(c, order, size_t(k) + 1));
    CHECK(t.damage[0].bytes == c[size_t(k)].size());
    CHECK(has(t.damage[0].message, "repeats chunk " + std::to_string(k) + ", read already: set aside"));
    CHECK(t.events.size() == 3);
    CHECK(report_of(t)["integrity"]["figures_complete"] == false);
  }
  // Repeated later, past other chunks: the same.
  const Trace t = parse_trace(span_of(join(c, {0, 1, 2, 3, 1, 4})));
  REQUIRE(t.damage.size() == 1);
  CHECK(t.damage[0].byte_offset == offset_of(c, {0, 1, 2, 3, 1, 4}, 4));
  CHECK(has(t.damage[0].message, "repeats chunk 1"));
}

TEST_CASE("1.10: chunks dropped in the middle are said missing at the next chunk's offset") {
  const auto c = five_chunks();
  SECTION("one") {
    const std::vector<int> order = {0, 1, 3, 4};
    const Trace t = parse_trace(span_of(join(c, order)));
    REQUIRE(t.damage.size() == 1);
    CHECK(t.damage[0].byte_offset == offset_of(c, order, 2));
    CHECK(t.damage[0].bytes == 0);
    CHECK(has(t.damage[0].message, "chunk 2 missing before"));
    CHECK(t.events.size() == 2);
    const json j = report_of(t);
    CHECK(j["integrity"]["figures_complete"] == false);
    CHECK(check_no_leak(join(c, order)).status != 0);
  }
  SECTION("two in a row") {
    const std::vector<int> order = {0, 1, 4};
    const Trace t = parse_trace(span_of(join(c, order)));
    REQUIRE(t.damage.size() == 1);
    CHECK(t.damage[0].byte_offset == offset_of(c, order, 2));
    CHECK(has(t.damage[0].message, "chunks 2-3 missing before"));
  }
  SECTION("after damaged bytes, the missing chunks are the damage, said once") {
    std::string bytes = join(c, {0, 1, 2, 3, 4});
    const uint64_t at = offset_of(c, {0, 1, 2, 3, 4}, 2) + 12;
    bytes[at] = char(bytes[at] ^ 0x40);
    const Trace t = parse_trace(span_of(bytes));
    REQUIRE(t.damage.size() == 1);
    CHECK(has(t.damage[0].message, "checksum mismatch"));
  }
}

TEST_CASE("1.10: a chunk spliced in from another trace is found and set aside") {
  const auto c = five_chunks();
  const auto other = five_chunks(fmt::kVersionMinor, TraceBuilder::kTraceId + 1);
  SECTION("in place of one of ours") {
    std::vector<std::string> mixed = c;
    mixed[2] = other[2];
    const std::vector<int> order = {0, 1, 2, 3, 4};
    const Trace t = parse_trace(span_of(join(mixed, order)));
    REQUIRE(t.damage.size() == 2);
    CHECK(t.damage[0].byte_offset == offset_of(mixed, order, 2));
    CHECK(t.damage[0].bytes == other[2].size());
    CHECK(has(t.damage[0].message, "belongs to another trace (trace id " + std::to_string(TraceBuilder::kTraceId + 1) +
                                       ", this one's is " + std::to_string(TraceBuilder::kTraceId) + "): set aside"));
    CHECK(has(t.damage[1].message, "chunk 2 missing before"));
    CHECK(t.events.size() == 2);
    CHECK(report_of(t)["integrity"]["figures_complete"] == false);
  }
  // Added between two of ours: one of another 1.10 trace, one of a 1.9 trace (no number).
  const auto old = five_chunks(9);
  for (const auto& [extra, why] :
       {std::pair{other[3], "belongs to another trace"}, std::pair{old[3], "has no sequence number"}}) {
    INFO(why);
    std::vector<std::string> mixed = c;
    mixed.push_back(extra);
    const std::vector<int> order = {0, 1, 2, 5, 3, 4};
    const Trace t = parse_trace(span_of(join(mixed, order)));
    REQUIRE(t.damage.size() == 1);
    CHECK(t.damage[0].byte_offset == offset_of(mixed, order, 3));
    CHECK(t.damage[0].bytes == extra.size());
    CHECK(has(t.damage[0].message, why));
    CHECK(t.events.size() == 3);
  }
}

TEST_CASE("1.10: a trace read in passes (event_source.h) finds the same reordering") {
  const auto c = five_chunks();
  const std::string bytes = join(c, {0, 1, 3, 2, 4});
  const TraceFile file(span_of(bytes), "swapped.trace", /*hold_bytes=*/0);
  REQUIRE_FALSE(file.holds_events());
  REQUIRE(file.trace().damage.size() == 2);
  const json whole = report_of(parse_trace(span_of(bytes), "swapped.trace"));
  const json passes = to_json(build_report(file.trace(), file.events(), ReportOptions{}));
  CHECK(passes["integrity"] == whole["integrity"]);
  CHECK(passes["integrity"]["figures_complete"] == false);
}

TEST_CASE("1.9 and older traces read as before: their chunks carry no numbers to check") {
  const auto c = five_chunks(9);
  // A 1.9 trace swapped reads without damage, as every 1.9 reader read it.
  const Trace t = parse_trace(span_of(join(c, {0, 1, 3, 2, 4})));
  CHECK(t.damage.empty());
  CHECK(t.events.size() == 3);
  CHECK(t.trace_id == 0);
  CHECK_FALSE(t.last_chunk_sequence);
  const Trace in_order = parse_trace(span_of(join(c, {0, 1, 2, 3, 4})));
  CHECK(in_order.damage.empty());
  CHECK(in_order.sealed_chunks == 5);
}
