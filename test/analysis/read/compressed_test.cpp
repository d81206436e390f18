// Trace format 1.7: a flush's records in one zstd frame (CompressedRecord). Read as if
// written in place; damage inside a sealed chunk is a writer's fault, said, and the chunks
// around it still read.
#include <zstd.h>

#include <cstring>
#include <string>

#include "catch.h"
#include "reports/report.h"
#include "trace_builder.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;

namespace {

// The records `inner` wrote after its file header, as one CompressedRecord payload.
std::string compressed_payload(const TraceBuilder& inner, int64_t size_error = 0) {
  const std::string raw = inner.bytes().substr(sizeof(fmt::FileHeader));
  std::string frame(ZSTD_compressBound(raw.size()), '\0');
  frame.resize(ZSTD_compress(frame.data(), frame.size(), raw.data(), raw.size(), 1));
  const fmt::CompressedRecord c{uint64_t(int64_t(raw.size()) + size_error), fmt::kCodecZstd, 0};
  std::string p(reinterpret_cast<const char*>(&c), sizeof c);
  return p + frame;
}

// Three allocations and a free inside one compressed record, between two plain chunks.
TraceBuilder with_compressed(int64_t size_error = 0) {
  TraceBuilder inner;
  inner.unsealed().alloc(10, 0x7000000000, 4 * MiB).alloc(11, 0x7000400000, 8 * MiB).free(12, 0x7000000000);
  inner.alloc(13, 0x7000c00000, 2 * MiB);
  TraceBuilder b;
  b.batch().process().device(0, 80ull << 30).seal();
  b.record(fmt::RecordType::kCompressed, compressed_payload(inner, size_error)).seal();
  b.alloc(20, 0x7001000000, MiB).seal();
  return b;
}

}  // namespace

TEST_CASE("1.7: the records in a compressed record are read in place, in order") {
  const Trace t = parse_trace(with_compressed().vec(), "t.trace");
  CHECK(t.damage.empty());
  CHECK(t.sealed_chunks == 3);
  REQUIRE(t.events.size() == 5);
  CHECK(t.events[0].size == 4 * MiB);
  CHECK(t.events[2].op == fmt::Op::kFree);
  CHECK(t.events[3].size == 2 * MiB);
  CHECK(t.events[4].size == MiB);  // the plain chunk after it
  const Report r = build_report(t, ReportOptions{});
  CHECK(r.devices.at(0).peak_bytes == 12 * MiB);  // 4 + 8 live at 11 ns; 8 + 2 + 1 = 11 at the end
}

TEST_CASE("1.7: a compressed record whose frame does not hold the announced size is damage, said with its byte") {
  const TraceBuilder b = with_compressed(+1);
  const Trace t = parse_trace(b.vec(), "t.trace");
  REQUIRE(t.damage.size() == 1);
  CHECK(t.damage[0].message.find("does not hold the announced size") != std::string::npos);
  CHECK(t.damage[0].message.find("a writer fault") != std::string::npos);
  REQUIRE(t.events.size() == 1);  // the chunk after it
  CHECK(t.events[0].size == MiB);
}
