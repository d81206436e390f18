// memviz of an expandable segment (render/export/memviz.cpp): PyTorch maps it in pieces
// (cuMemMap) and a block may span two of them; its snapshot shows one segment of the mapped
// run, is_expandable. Worked out by hand from the addresses below.
#include "export_fixtures.h"
#include "sizes.h"

using namespace cumemtrace::test::exports;

namespace {

Event mapping(uint64_t t, fmt::Op op, uint64_t address, uint64_t size) {
  Event e;
  e.time_ns = t, e.op = op, e.kind = fmt::Kind::kVmmMap, e.address = address, e.size = size, e.device = 0;
  return e;
}

BlockEvent block(uint64_t t, fmt::BlockOp op, uint64_t address, uint64_t size, size_t events_before) {
  BlockEvent b;
  b.time_ns = t, b.op = op, b.address = address, b.size = size, b.device = 0, b.events_before = events_before;
  b.flags = fmt::kBlockUsageReport;
  return b;
}

}  // namespace

TEST_CASE("memviz: adjacent mappings that hold blocks are one expandable segment, and a library's mapping is none") {
  const uint64_t A = 0x7f0000000000, C = 0x7f0040000000;
  Trace t;
  t.events = {mapping(1000, fmt::Op::kMap, A, 2 * MiB), mapping(2000, fmt::Op::kMap, A + 2 * MiB, 2 * MiB),
              mapping(3000, fmt::Op::kMap, C, 2 * MiB)};
  // [A, A+512K) and [A+1M, A+3M), across the two mappings; C holds none (a library's).
  t.block_events = {block(2500, fmt::BlockOp::kAlloc, A, MiB / 2, 2),
                    block(2600, fmt::BlockOp::kAlloc, A + 1 * MiB, 2 * MiB, 2)};
  const std::string path = tmp_path("expandable.pickle");
  {
    std::ofstream out(path, std::ios::binary);
    const MemvizCounts c = write_memviz(out, t);
    CHECK(c.segments == 1);
    CHECK(c.events == 4);  // two segment_map, two alloc
  }
  const json got = load_with_python(path);
  std::remove(path.c_str());
  CHECK(got["history_errors"] == json::array());
  const json& snap = got["snapshot"];
  REQUIRE(snap["segments"].size() == 1);
  const json& s = snap["segments"][0];
  CHECK(s["address"] == A);
  CHECK(s["total_size"] == 4 * MiB);
  CHECK(s["is_expandable"] == true);
  CHECK(s["allocated_size"] == 2 * MiB + MiB / 2);
  std::vector<std::pair<uint64_t, std::string>> pieces;
  for (const json& blk : s["blocks"]) pieces.emplace_back(blk["size"].get<uint64_t>(), blk["state"].get<std::string>());
  CHECK(pieces == std::vector<std::pair<uint64_t, std::string>>{{MiB / 2, "active_allocated"},
                                                                {MiB / 2, "inactive"},
                                                                {2 * MiB, "active_allocated"},
                                                                {1 * MiB, "inactive"}});
  std::vector<std::string> actions;
  for (const json& e : snap["device_traces"][0]) actions.push_back(e["action"].get<std::string>());
  CHECK(actions == std::vector<std::string>{"segment_map", "segment_map", "alloc", "alloc"});

  // The second mapping's block freed and the mapping unmapped: [A, A+2M) is left, one block.
  t.events.push_back(mapping(4000, fmt::Op::kUnmap, A + 2 * MiB, 2 * MiB));
  t.block_events.push_back(block(3500, fmt::BlockOp::kFree, A + 1 * MiB, 0, 3));
  {
    std::ofstream out(path, std::ios::binary);
    write_memviz(out, t);
  }
  const json again = load_with_python(path);
  std::remove(path.c_str());
  REQUIRE(again["snapshot"]["segments"].size() == 1);
  CHECK(again["snapshot"]["segments"][0]["total_size"] == 2 * MiB);
  CHECK(again["snapshot"]["segments"][0]["blocks"].size() == 2);
  CHECK(again["history_errors"] == json::array());
}
