// PyTorch's block map at an out-of-memory error (include/cumemtrace/api.h, trace record
// AllocatorSegments, analysis/allocator_map.h), on the simulated driver, without PyTorch:
// a C program calling the API as the observer would.
#include <catch2/catch.hpp>

#include <fstream>

#include "harness.h"

using namespace harness;

namespace {

constexpr int64_t MiB = 1 << 20, GiB = int64_t(1) << 30;

const Env k16GiB = {{"SIMCUDA_CAPACITY", std::to_string(16 * GiB)}};

}  // namespace

TEST_CASE("a block map given after an OOM: exact bytes inside the cached segments, and no free block fits") {
  const std::string prog = std::string(CUMEMTRACE_TEST_LIBS_DIR) + "/allocator_map";
  const Result plain = run({prog}, k16GiB);
  CHECK(plain.exit_code == 0);
  CHECK(plain.out == "oom: cudaErrorMemoryAllocation; tracer absent\n");
  TempDir dir;
  const Result t = traced(dir, {prog}, k16GiB);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out == "oom: cudaErrorMemoryAllocation; map: 0; bad: -1\n");
  CHECK(t.err.find("a segment's blocks lie outside the block array") != std::string::npos);

  const std::string trace = only_trace(dir);
  const auto r = report(trace);
  REQUIRE(r.at("failed_allocations").size() == 1);
  const auto& f = r.at("failed_allocations").at(0);
  CHECK(f.at("diagnosis").at("cause") == "cached-by-allocator");
  const auto& m = f.at("allocator_map");
  REQUIRE(m.is_object());
  CHECK(m.at("allocator") == "pytorch");
  CHECK(m.at("request") == 9 * GiB);
  CHECK(m.at("segments") == 2);
  CHECK(m.at("segments_joined") == 1);
  CHECK(m.at("segments_unjoined") == 1);
  CHECK(m.at("total_bytes") == 9 * GiB + 2 * MiB);
  CHECK(m.at("allocated_bytes") == 29 * 256 * MiB);
  CHECK(m.at("allocated_blocks") == 29);
  CHECK(m.at("pending_free_bytes") == 256 * MiB);
  CHECK(m.at("pending_free_blocks") == 1);
  CHECK(m.at("free_bytes") == 6 * 256 * MiB + 2 * MiB);
  CHECK(m.at("free_blocks") == 7);
  CHECK(m.at("largest_free_block") == 256 * MiB);
  CHECK(m.at("free_block_fits") == false);
  const auto& segs = m.at("largest_segments");
  REQUIRE(segs.size() == 2);
  CHECK(segs.at(0).at("total_bytes") == 9 * GiB);
  CHECK(segs.at(0).at("blocks") == 36);
  CHECK(segs.at(0).at("free_bytes") == 6 * 256 * MiB);
  CHECK(segs.at(0).at("segment_type") == "large");
  REQUIRE(segs.at(0).at("allocation").is_object());
  CHECK(segs.at(0).at("allocation").at("size") == 9 * GiB);
  CHECK(segs.at(0).at("allocation").at("kind") == "device");
  CHECK(segs.at(1).at("address") == 0x1000);
  CHECK(segs.at(1).at("segment_type") == "small");
  CHECK(segs.at(1).at("allocation").is_null());

  const Result text = run({cli(), "report", trace});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("PyTorch's block map at the failure: 2 cached segments (9.00 GiB (9,665,773,568 B)), "
                      "1 joined to a traced allocation, 1 not") != std::string::npos);
  CHECK(text.out.find("largest free block: 256.00 MiB (268,435,456 B); no free block is as large as the "
                      "request (9663676416 B)") != std::string::npos);
}
