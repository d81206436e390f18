// `export --format memviz` writes each stack's frames once and refers to them after (pickle's
// memo), so that its pickle grows with the live set, not with stacks times their uses
// (issue 29: 831 MB for 200,000 live allocations).
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "catch.h"
#include "render/export/memviz.h"
#include "parse_built.h"
#include "shell.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::span_of;
using cumemtrace::test::TraceBuilder;
using json = nlohmann::json;

TEST_CASE("memviz writes each stack's frames once: many live blocks over few stacks stay small") {
  // 400 live allocations over 10 stacks of 8 frames each (80 distinct frames), never freed.
  constexpr int kStacks = 10, kDepth = 8, kLive = 400;
  TraceBuilder b;
  b.process().device(0, 80ull << 30).batch();
  for (int s = 0; s < kStacks; ++s)
    for (int d = 0; d < kDepth; ++d) {
      const uint32_t id = uint32_t(s * kDepth + d + 1);
      b.stack(id, d == 0 ? 0 : id - 1, 0x400000 + uint64_t(s) * 0x1000 + uint64_t(d) * 0x10);
    }
  for (int i = 0; i < kLive; ++i)
    b.alloc(10 + uint64_t(i), 0x7000000000 + uint64_t(i) * 0x10000, 4096, uint32_t((i % kStacks + 1) * kDepth));
  b.end(100000).seal();
  const Trace t = parse_trace(span_of(b.bytes()));
  REQUIRE(t.events.size() == size_t(kLive));

  const std::string path = "/tmp/cumemtrace_memviz_size_test_" + std::to_string(getpid()) + ".pickle";
  MemvizCounts c;
  {
    std::ofstream out(path, std::ios::binary);
    c = write_memviz(out, t);
  }
  CHECK(c.segments == uint64_t(kLive));
  CHECK(c.events == uint64_t(2 * kLive));
  CHECK(c.frame_lists == uint64_t(kStacks));  // not 4 per block (segment, block, two entries)
  CHECK(c.frames == uint64_t(kStacks * kDepth));
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  // Per live block: a segment with one block and two trace entries, each frames a reference
  // (about 270 bytes in all); the frames themselves once. Written out per use, the frames
  // alone took 4 x 8 x ~25 bytes per block more.
  CHECK(bytes.size() < uint64_t(kLive) * 300 + uint64_t(kStacks * kDepth) * 64);

  const json got = json::parse(test::shell("/usr/bin/python3 " CUMEMTRACE_MEMVIZ_LOAD " " + path).out);
  std::remove(path.c_str());
  const json& segments = got["snapshot"]["segments"];
  REQUIRE(segments.size() == size_t(kLive));
  for (size_t i : {size_t(0), size_t(7), size_t(kLive - 1)}) {
    const int s = int(i % kStacks);
    const json& frames = segments[i]["frames"];
    REQUIRE(frames.size() == size_t(kDepth));
    // Innermost first: the stack's last node, 0x400000 + s * 0x1000 + 7 * 0x10.
    char want[32];
    std::snprintf(want, sizeof want, "0x%x", 0x400000 + s * 0x1000 + (kDepth - 1) * 0x10);
    CHECK(frames[0]["name"] == want);
    CHECK(segments[i]["blocks"][0]["frames"] == frames);
  }
  CHECK(got["history_errors"] == json::array());
}
