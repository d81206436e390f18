// Inside pools (reports/pools.h): heaps and regions a pool declared through NVTX's memory
// extension, replayed by its rules; every figure worked out by hand from the traces below.
#include "reports/pools.h"

#include <sstream>

#include "catch.h"
#include "parse_built.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "reports/report.h"

using namespace cumemtrace;
using cumemtrace::test::parse;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;
using fmt::NvtxMemOp;

namespace {

constexpr uint64_t A = 0x100000, B = 0x200000;

// Heap "a" (0x10): [A, A+1000), inside the 4096-B allocation at A. Heap "b" (0x20): [B, B+100).
// Marks "step" at 100, 200, 300, 400, a clean end at 500: boundaries 100-500, 4 iterations.
//   a: t=20 [0,100) stack 1, kept ("weights", never named)
//      t=50 [950,1050) stack 1, not wholly inside, unregistered at 60
//      t=70 [900,910) stack 1, then t=80 [900,920) at the same address (replaces it), gone at 90
//      t=95-97 a resize, a name and an unregister of addresses with no region: 3 unknown
//      each iteration k: t=110+100k [300+50k, +50) stack 2, kept (a leak of 50 B an iteration);
//      t=120+100k [600,800) stack 1, named "tmp" at 121+100k, unregistered at 130+100k
//      peak at t=420: 100 + 200 + 200 = 500 B in 6 regions; free [100,300) [500,600)
//      [800,1000): 500 B, largest 200
//      end: 300 B in 5; free [100,300) [500,1000): 700 B, largest 500
//   b: t=31, 32 [0,10) [16,26) stack 2; reset at 440; t=450 [32,62) stack 2: peak 30 B at 450
//      (above the 20 B at 32); free [0,32) [62,100): 70 B, largest 38
//   heap 0x30, never registered: t=460 [0x300000, +64) stack 1
TraceBuilder pooled() {
  TraceBuilder b;
  b.process().device(0, 1ull << 30).stack(1, 0, 0x4001).stack(2, 0, 0x4002);
  b.alloc(5, A, 4096).alloc(6, B, 4096);
  b.nvtx_mem(10, NvtxMemOp::kHeapRegister, 0x10, A, 1000, 1, "a", 1);
  b.nvtx_mem(20, NvtxMemOp::kRegionRegister, 0x10, A, 100, 1);
  b.nvtx_mem(30, NvtxMemOp::kHeapRegister, 0x20, B, 100, 1, "b", 1);
  b.nvtx_mem(31, NvtxMemOp::kRegionRegister, 0x20, B, 10, 2)
      .nvtx_mem(32, NvtxMemOp::kRegionRegister, 0x20, B + 16, 10, 2);
  b.nvtx_mem(50, NvtxMemOp::kRegionRegister, 0x10, A + 950, 100, 1)
      .nvtx_mem(60, NvtxMemOp::kRegionUnregister, 0, A + 950);
  b.nvtx_mem(70, NvtxMemOp::kRegionRegister, 0x10, A + 900, 10, 1);
  b.nvtx_mem(80, NvtxMemOp::kRegionRegister, 0x10, A + 900, 20, 1);
  b.nvtx_mem(90, NvtxMemOp::kRegionUnregister, 0, A + 900);
  b.nvtx_mem(95, NvtxMemOp::kRegionResize, 0, 0x999, 100).nvtx_mem(96, NvtxMemOp::kRegionName, 0, 0x998, 0, 0, "x");
  b.nvtx_mem(97, NvtxMemOp::kRegionUnregister, 0, 0x997);
  for (uint64_t k = 0; k < 4; ++k) {
    const uint64_t t = 100 * (k + 1);
    b.mark(t, "step");
    b.nvtx_mem(t + 10, NvtxMemOp::kRegionRegister, 0x10, A + 300 + 50 * k, 50, 2);
    b.nvtx_mem(t + 20, NvtxMemOp::kRegionRegister, 0x10, A + 600, 200, 1);
    b.nvtx_mem(t + 21, NvtxMemOp::kRegionName, 0, A + 600, 0, 0, "tmp");
    b.nvtx_mem(t + 30, NvtxMemOp::kRegionUnregister, 0, A + 600);
  }
  b.nvtx_mem(440, NvtxMemOp::kHeapReset, 0x20, 0);
  b.nvtx_mem(450, NvtxMemOp::kRegionRegister, 0x20, B + 32, 30, 2);
  b.nvtx_mem(460, NvtxMemOp::kRegionRegister, 0x30, 0x300000, 64, 1);
  b.end(500);
  return b;
}

const uint64_t t0 = TraceBuilder::kStart;

}  // namespace

TEST_CASE("inside pools: heaps, their peak and end, fragmentation inside, and region sites by call site and name") {
  const Report r = build_report(parse(pooled()), ReportOptions{});
  REQUIRE(r.growth.boundaries_ns == std::vector<uint64_t>{t0 + 100, t0 + 200, t0 + 300, t0 + 400, t0 + 500});
  const Pools& p = r.pools;
  CHECK(p.unknown_references == 3);
  REQUIRE(p.heaps.size() == 3);

  const PoolHeap& a = p.heaps[0];
  CHECK(a.name == "a");
  CHECK(a.declared);
  CHECK(a.usage == 1);
  CHECK((a.address == A && a.size == 1000));
  CHECK((a.device == 0 && a.backing_address == A && a.backing_size == 4096));
  CHECK(a.registered_ns == t0 + 10);
  CHECK(!a.gone_ns);
  CHECK(a.regions_registered == 12);
  CHECK(a.bytes_registered == 100 + 100 + 10 + 20 + 4 * 50 + 4 * 200);
  CHECK(a.outside == 1);
  CHECK((a.peak_bytes == 500 && a.peak_count == 6 && a.peak_time_ns == t0 + 420));
  CHECK((a.inside_at_peak.gap_bytes == 500 && a.inside_at_peak.largest_gap == 200));
  CHECK((a.inside_at_peak.arena_bytes == 1000 && a.inside_at_peak.live_bytes == 500));
  CHECK(a.inside_at_peak.external_fragmentation() == Approx(0.6));
  CHECK((a.end_bytes == 300 && a.end_count == 5));
  CHECK((a.inside_at_end.gap_bytes == 700 && a.inside_at_end.largest_gap == 500));

  REQUIRE(a.sites.size() == 3);
  const PoolSite& kv = a.sites[0];  // leaks first
  CHECK(kv.cls == GrowthSite::Class::kLeak);
  CHECK(kv.name.empty());
  CHECK(kv.bytes_at == std::vector<uint64_t>{0, 50, 100, 150, 200});
  CHECK((kv.growth_per_iteration == 50 && kv.growth_min == 50 && kv.growth_max == 50));
  CHECK((kv.peak_bytes == 200 && kv.peak_count == 4 && kv.end_bytes == 200 && kv.end_count == 4));
  CHECK((kv.registered == 4 && kv.registered_within == 4));
  CHECK(kv.frames.at(0).ip == 0x4002);
  // Named after its register: the name counts for the region's whole life, the peak too.
  const PoolSite& tmp = a.sites[1];
  CHECK(tmp.name == "tmp");
  CHECK(tmp.cls == GrowthSite::Class::kTransient);
  CHECK(tmp.bytes_at == std::vector<uint64_t>(5, 0));
  CHECK((tmp.peak_bytes == 200 && tmp.peak_count == 1 && tmp.end_bytes == 0 && tmp.registered == 4));
  const PoolSite& kept = a.sites[2];
  CHECK(kept.name.empty());
  CHECK(kept.cls == GrowthSite::Class::kOneTime);
  CHECK(kept.bytes_at == std::vector<uint64_t>(5, 100));
  CHECK((kept.peak_bytes == 100 && kept.end_bytes == 100 && kept.registered == 4 && kept.registered_within == 0));

  const PoolHeap& b = p.heaps[1];
  CHECK(b.name == "b");
  CHECK(b.resets == 1);
  CHECK((b.peak_bytes == 30 && b.peak_count == 1 && b.peak_time_ns == t0 + 450));
  CHECK((b.inside_at_peak.gap_bytes == 70 && b.inside_at_peak.largest_gap == 38));
  CHECK((b.end_bytes == 30 && b.end_count == 1 && b.backing_address == B));
  REQUIRE(b.sites.size() == 1);
  CHECK(b.sites[0].bytes_at == std::vector<uint64_t>{20, 20, 20, 20, 30});
  CHECK(b.sites[0].cls == GrowthSite::Class::kOneTime);

  const PoolHeap& c = p.heaps[2];
  CHECK(c.handle == 0x30);
  CHECK(!c.declared);
  CHECK((c.size == 0 && c.backing_size == 0 && c.device == -1));
  CHECK((c.end_bytes == 64 && c.peak_bytes == 64));
  CHECK(c.inside_at_end.arena_bytes == 0);  // no range: no figures inside

  const auto j = report_json(r).at("pools");
  CHECK(j.at("unknown_references") == 3);
  CHECK(j.at("heaps").at(0).at("peak").at("inside").at("largest_gap") == 200);
  CHECK(j.at("heaps").at(0).at("sites").at(0).at("class") == "leak");
  CHECK(j.at("heaps").at(2).at("address").is_null());
  CHECK(j.at("heaps").at(2).at("end").at("inside").is_null());
  std::ostringstream text;
  write_text(text, r);
  CHECK(text.str().find("    leak: unnamed regions, +50 B per iteration (steps 50 B to 50 B); 200 B in 4 at the peak, "
                        "200 B in 4 at the end; 4 registered\n") != std::string::npos);
  CHECK(text.str().find("    peak 500 B in 6 regions; 500 B of the heap free, the largest run 200 B (external "
                        "fragmentation 0.6000)") != std::string::npos);
  CHECK(text.str().find("    transient: \"tmp\" regions") != std::string::npos);
  CHECK(text.str().find("  inside pools: leaks +50 B per iteration of unnamed regions in heap \"a\"\n") !=
        std::string::npos);
}

TEST_CASE(
    "inside pools: a reset of the process-wide heap empties every heap, an unregistered heap ends with its regions") {
  TraceBuilder b;
  b.process().device(0, 1ull << 30).stack(1, 0, 0x4001);
  for (uint64_t h = 1; h <= 3; ++h) b.nvtx_mem(10 * h, NvtxMemOp::kHeapRegister, h, 0x1000 * h, 100, 1);
  b.nvtx_mem(11, NvtxMemOp::kRegionRegister, 1, 0x1000, 10, 1);
  b.nvtx_mem(21, NvtxMemOp::kRegionRegister, 2, 0x2000, 20, 1);
  b.nvtx_mem(31, NvtxMemOp::kRegionRegister, 3, 0x3000, 30, 1)
      .nvtx_mem(32, NvtxMemOp::kRegionRegister, 3, 0x3020, 5, 1);
  b.nvtx_mem(40, NvtxMemOp::kHeapUnregister, 3, 0);
  b.nvtx_mem(50, NvtxMemOp::kHeapReset, 0, 0);
  b.nvtx_mem(60, NvtxMemOp::kRegionRegister, 1, 0x1010, 7, 1);
  b.nvtx_mem(70, NvtxMemOp::kRegionRegister, 3, 0x3000, 1, 1);  // heap 3 is gone: an undeclared heap 3
  // No End record, no marks: a trace cut short; its figures are the records it has.
  const Report r = build_report(parse(b), ReportOptions{});
  const Pools& p = r.pools;
  REQUIRE(p.heaps.size() == 4);
  CHECK((p.heaps[0].resets == 1 && p.heaps[1].resets == 1 && p.heaps[2].resets == 0));
  CHECK((p.heaps[0].peak_bytes == 10 && p.heaps[0].end_bytes == 7 && p.heaps[0].end_count == 1));
  CHECK((p.heaps[1].peak_bytes == 20 && p.heaps[1].end_bytes == 0));
  CHECK((p.heaps[2].end_bytes == 35 && p.heaps[2].end_count == 2 && p.heaps[2].gone_ns == t0 + 40));
  CHECK((p.heaps[2].inside_at_end.gap_bytes == 65 && p.heaps[2].inside_at_end.largest_gap == 63));
  CHECK((p.heaps[3].handle == 3 && !p.heaps[3].declared && p.heaps[3].end_bytes == 1));
  CHECK(p.heaps[0].device == -1);  // no allocation holds it
  std::ostringstream text;
  write_text(text, r);
  // At most three heaps named, then how many there are.
  CHECK(text.str().find("  inside pools: no leak; at their peaks 0x1 10 B in 1 region, 0x2 20 B in 1 region, 0x3 35 B "
                        "in 2 regions, ... (4 heaps)\n") != std::string::npos);
}

TEST_CASE("a trace without NVTX memory records has no pools section") {
  TraceBuilder b;
  b.process().device(0, 1ull << 30).alloc(5, A, 4096).end(10);
  const Report r = build_report(parse(b), ReportOptions{});
  CHECK(r.pools.heaps.empty());
  CHECK(!report_json(r).contains("pools"));
  std::ostringstream text;
  write_text(text, r);
  CHECK(text.str().find("Inside pools") == std::string::npos);
}

TEST_CASE("inside pools: calls on heaps not registered then, an empty heap, ranges past 2^64, a freed allocation") {
  TraceBuilder b;
  b.process().device(0, 1ull << 30).stack(1, 0, 0x4001);
  b.alloc(5, 0x10000, 4096).free(6, 0x10000);  // freed before heap 1 is registered in it
  b.nvtx_mem(10, NvtxMemOp::kHeapRegister, 1, 0x10000, 100, 1, "empty");
  b.nvtx_mem(20, NvtxMemOp::kHeapUnregister, 2, 0);                                                 // never registered
  b.nvtx_mem(21, NvtxMemOp::kHeapReset, 3, 0);                                                      // never registered
  b.nvtx_mem(30, NvtxMemOp::kHeapUnregister, 1, 0).nvtx_mem(31, NvtxMemOp::kHeapUnregister, 1, 0);  // twice
  const uint64_t top = 0xFFFFFFFFFFF00000ull;  // a heap of 2 MiB from here would pass 2^64
  b.nvtx_mem(40, NvtxMemOp::kHeapRegister, 4, top, 2ull << 20, 1, "wraps");
  b.nvtx_mem(50, NvtxMemOp::kHeapRegister, 5, 0x20000, 8ull << 20, 1, "huge region");
  b.nvtx_mem(51, NvtxMemOp::kRegionRegister, 5, 0x20000, UINT64_MAX, 1);
  b.end(60);
  const Pools p = build_report(parse(b), ReportOptions{}).pools;
  CHECK(p.unknown_references == 3);  // 2 and 3 never registered, 1 unregistered twice: no heap made of them
  REQUIRE(p.heaps.size() == 3);
  const PoolHeap& empty = p.heaps[0];
  CHECK((empty.name == "empty" && empty.gone_ns == t0 + 30));
  CHECK((empty.device == -1 && empty.backing_size == 0));  // its allocation was freed before it
  CHECK((empty.peak_bytes == 0 && empty.inside_at_peak.arena_bytes == 100));
  CHECK((empty.inside_at_peak.gap_bytes == 100 && empty.inside_at_peak.largest_gap == 100));
  const PoolHeap& wraps = p.heaps[1];
  CHECK(wraps.inside_at_end.gap_bytes == UINT64_MAX - top);  // its bytes below 2^64
  const PoolHeap& huge = p.heaps[2];
  CHECK(huge.outside == 1);
  CHECK((huge.inside_at_end.gap_bytes == 0 && huge.end_bytes == UINT64_MAX));
}
