// `cumemtrace html`'s data (html_data.h) and page (html_page.h), on traces whose figures
// are worked out by hand (the layouts of docs/fragmentation.md, granule 2 MiB).
#include <map>
#include <sstream>
#include <string>

#include "catch.h"
#include "read/event_source.h"
#include "render/page/html_data.h"
#include "../../../view/html/html_page.h"  // linked through cumemtrace_cli
#include "reports/report.h"
#include "stacks/stacks.h"
#include "parse_built.h"

using namespace cumemtrace;
using cumemtrace::test::parse;
using cumemtrace::test::TraceBuilder;
using Json = nlohmann::ordered_json;

namespace {

// The page's data both ways a command can read the trace: held whole, and with its
// events read again from the bytes at each pass (TraceFile, as `html` reads a large
// file); they must agree. The first is returned.
Json data_of(const TraceBuilder& b, const HtmlDataOptions& opt = {}) {
  const Trace t = parse(b);
  const Report rep = build_report(t, ReportOptions{});
  const Stacks stacks(t);
  const Json whole = html_data(t, rep, stacks, page_model(t, MemoryEvents(t.events), rep, stacks, opt), opt);
  const std::string& bytes = b.bytes();
  const TraceFile file({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, {}, /*hold_bytes=*/0);
  REQUIRE_FALSE(file.holds_events());
  const Report streamed_rep = build_report(file.trace(), file.events(), ReportOptions{});
  const Stacks streamed_stacks(file.trace());
  PageModel streamed = page_model(file.trace(), file.events(), streamed_rep, streamed_stacks, opt);
  CHECK(html_data(file.trace(), streamed_rep, streamed_stacks, std::move(streamed), opt).dump() == whole.dump());
  return whole;
}

const Json* moment(const Json& d, const std::string& kind) {
  for (const auto& m : d.at("moments"))
    if (m.at("kind").get<std::string>().find(kind) != std::string::npos) return &m;
  return nullptr;
}

}  // namespace

TEST_CASE("html: the address map at the peak has the arena, the largest gap where it lies, and the live bytes") {
  // Three 512 B blocks packed at the start of one granule, then the middle one freed:
  // the peak (1,536 B) is before the free.
  TraceBuilder b;
  b.process().alloc(1, 0x10000000, 512).alloc(2, 0x10000200, 512).alloc(3, 0x10000400, 512).free(4, 0x10000200);
  const Json d = data_of(b);
  const Json* peak = moment(d, "peak");
  REQUIRE(peak);
  CHECK(peak->at("t") == 3);  // ns since start
  const Json& dev = peak->at("devices").at(0);
  CHECK(dev.at("arenas") == Json::array({Json::array({0x10000000, 0x10200000})}));
  CHECK(dev.at("largest_gap") == 2097152 - 1536);
  // The one gap: from the third block's end to the granule's end.
  CHECK(dev.at("largest_gap_at") == Json::array({0x10000600, 2097152 - 1536}));
  CHECK(dev.at("allocs").size() == 3 * 4);
  CHECK(dev.at("flame").at(1) == 1536);  // the icicle's root: all live bytes

  const Json* end = moment(d, "end");
  REQUIRE(end);
  const Json& e = end->at("devices").at(0);
  // At the end the freed middle block is a 512 B gap; the tail is still the largest.
  CHECK(e.at("gap_bytes") == 2097152 - 1024);
  CHECK(e.at("largest_gap_at") == Json::array({0x10000600, 2097152 - 1536}));
  CHECK(e.at("flame").at(1) == 1024);
}

TEST_CASE("html: the timeline keeps every bucket's extremes, so the peak survives decimation") {
  // 1,000 allocations of 512 B one ns apart, then all freed: peak 512,000 B at t = 1,000.
  TraceBuilder b;
  b.process();
  for (uint64_t i = 0; i < 1000; ++i) b.alloc(i + 1, 0x10000000 + i * 512, 512);
  for (uint64_t i = 0; i < 1000; ++i) b.free(1001 + i, 0x10000000 + i * 512);
  HtmlDataOptions opt;
  opt.buckets = 10;
  const Json d = data_of(b, opt);
  const Json& tl = d.at("devices").at(0).at("timeline");
  CHECK(tl.at("t").size() <= 3 * 11);  // lowest, highest and last per bucket, at most
  uint64_t max = 0, at = 0;
  for (size_t i = 0; i < tl.at("tracked").size(); ++i)
    if (tl.at("tracked")[i].get<uint64_t>() > max) {
      max = tl.at("tracked")[i];
      at = tl.at("t")[i];
    }
  CHECK(max == 512000);
  CHECK(at == 1000);
  CHECK(tl.at("tracked").back() == 0);
}

TEST_CASE("html: spaced moments stop when their allocation budget is spent") {
  TraceBuilder b;
  b.process();
  for (uint64_t i = 0; i < 100; ++i) b.alloc(i + 1, 0x10000000 + i * 512, 512);
  HtmlDataOptions opt;
  opt.spaced_moments = 9;  // after events 10, 20, ... 90: 11, 21, ... 91 allocations live
  opt.alloc_budget = 11 + 21 + 31;
  const Json d = data_of(b, opt);
  size_t spaced = 0;
  for (const auto& m : d.at("moments")) spaced += m.at("kind") == "spaced";
  CHECK(spaced == 3);
}

TEST_CASE("html: the page cannot be closed early by a string in the data") {
  std::ostringstream out;
  write_html_page(out, Json{{"frame", "</script><!-- x"}}, "t</title>");
  const std::string page = out.str();
  CHECK(page.find("\\u003c/script>\\u003c!-- x") != std::string::npos);
  CHECK(page.find("<title>t&lt;/title&gt;</title>") != std::string::npos);
  size_t closers = 0;
  for (size_t at = page.find("</script"); at != std::string::npos; at = page.find("</script", at + 1)) ++closers;
  CHECK(closers == 5);  // the data's element and the four scripts' own
}

TEST_CASE("html: live bytes by call site, per device: one call site on two devices is each device's own band") {
  // Stack 2 allocates 20 MiB on device 1; stack 1 then 5 MiB on device 1 and 10 MiB on
  // device 0. Device 1's bands (its top sites at its peak): stack 2, stack 1; device 0's:
  // stack 1 alone.
  constexpr uint64_t MiB = 1 << 20;
  TraceBuilder b;
  b.process().device(0, 1ull << 34).device(1, 1ull << 34).stack(1, 0, 0x1000).stack(2, 0, 0x2000);
  b.alloc(10, 0x7f0000000000, 20 * MiB, 2, 1);
  b.alloc(20, 0x7f1000000000, 5 * MiB, 1, 1);
  b.alloc(30, 0x7f2000000000, 10 * MiB, 1, 0);
  b.end(40);
  const Json d = data_of(b);
  std::map<int, Json> devs;
  for (const auto& dv : d.at("devices")) devs[dv.at("device").get<int>()] = dv;
  const Json& b0 = devs.at(0).at("timeline").at("bands");
  const Json& b1 = devs.at(1).at("timeline").at("bands");
  REQUIRE(b0.size() == 2);  // stack 1, other
  REQUIRE(b1.size() == 3);  // stack 2, stack 1, other
  CHECK(b0[0].back() == 10 * MiB);
  CHECK(b0[1].back() == 0);
  CHECK(b1[0].back() == 20 * MiB);
  CHECK(b1[1].back() == 5 * MiB);
  CHECK(b1[2].back() == 0);
  for (const auto& [dev, dv] : devs) {
    const Json& tl = dv.at("timeline");
    for (size_t i = 0; i < tl.at("t").size(); ++i) {
      uint64_t sum = 0;
      for (const auto& band : tl.at("bands")) sum += band[i].get<uint64_t>();
      CHECK(sum == tl.at("tracked")[i].get<uint64_t>());
    }
  }
}

TEST_CASE("html: the time range runs from the first memory event or mark to the last, not to NVML's exit reading") {
  // Allocations at 10 and 20 ns, a mark at 30 ns, NVML's exit reading at 1,000,000 ns:
  // the range is [10, 30] (ns since start), the reading is still in the data.
  TraceBuilder b;
  b.process().alloc(10, 0x10000000, 512).alloc(20, 0x10000200, 512).mark(30, "step");
  b.snapshot(1000000, format::SnapshotReason::kExit, {{.device = 0, .device_bytes = 1024, .nvml_used = 4096}});
  b.end(1000001);
  const Json d = data_of(b);
  CHECK(d.at("time_range_ns") == Json::array({10, 30}));
  CHECK(d.at("devices").at(0).at("nvml").at("t") == Json::array({1000000}));

  // Without the mark: to the last event, 20 ns; a mark before the first event starts it.
  TraceBuilder unmarked;
  unmarked.process().alloc(10, 0x10000000, 512).alloc(20, 0x10000200, 512);
  unmarked.snapshot(1000000, format::SnapshotReason::kExit, {{.device = 0, .device_bytes = 1024, .nvml_used = 4096}});
  CHECK(data_of(unmarked).at("time_range_ns") == Json::array({10, 20}));
  TraceBuilder early;
  early.process().mark(5, "start").alloc(10, 0x10000000, 512);
  CHECK(data_of(early).at("time_range_ns") == Json::array({5, 10}));
}

TEST_CASE("html: 500 steps of 3 NVTX ranges keep every mark, each named, for the page to draw as bands") {
  // A step every 1,000 ns: forward at +0, backward at +300, optimizer at +600, each with
  // 1 MiB made and freed inside; 1,500 marks, 500 of each name, the last at 499,600 ns.
  static const char* const names[] = {"forward", "backward", "optimizer"};
  TraceBuilder b;
  b.process();
  for (uint64_t s = 0; s < 500; ++s)
    for (uint64_t r = 0; r < 3; ++r) {
      const uint64_t t = 1000 * s + 300 * r;
      b.mark(t + 1, names[r], format::MarkSource::kNvtxPush).alloc(t + 2, 0x10000000, 1 << 20).free(t + 3, 0x10000000);
      b.range_end(t + 4, names[r]);
    }
  const Json d = data_of(b);
  const Json& marks = d.at("marks");
  REQUIRE(marks.size() == 1500);
  CHECK(d.at("marks_omitted") == 0);
  std::map<std::string, size_t> count;
  for (const auto& m : marks) ++count[m.at(1).get<std::string>()];
  CHECK(count == std::map<std::string, size_t>{{"backward", 500}, {"forward", 500}, {"optimizer", 500}});
  CHECK(marks.at(0) == Json::array({1, "forward"}));
  CHECK(marks.at(1499) == Json::array({499601, "optimizer"}));
  // From the first mark (1 ns) to the last event, optimizer's free at 499,603 ns.
  CHECK(d.at("time_range_ns") == Json::array({1, 499603}));
}

TEST_CASE("html: the flame graph over a time range keeps each bucket's highest moment, a bucket's start included") {
  // Stack 1 makes A (4 MiB) at 100 ns, stack 2 B (8 MiB) at 200, B is freed at 300,
  // stack 2 makes C (2 MiB) at 600, A is freed at 900; the trace ends at 1,000. With ten
  // timeline buckets of 1,000 / 10 + 1 = 101 ns, the range [100, 900] is buckets 0 to 8,
  // one flame bucket each (fewer than 200). Each bucket's highest, by hand:
  //   0: A made (100 ns), 4 MiB        1: B made (200), 12 MiB
  //   2: its start (202), still 12 MiB: B is freed only at 300
  //   3, 4: their starts, 4 MiB       5: C made (600), 6 MiB
  //   6, 7, 8: their starts, 6 MiB (A's free at 900 only lowers it)
  // Paths are numbered as first met: stack 1's 0, stack 2's 1.
  constexpr uint64_t MiB = 1 << 20;
  TraceBuilder b;
  b.process().stack(1, 0, 0x1000).stack(2, 0, 0x2000);
  b.alloc(100, 0x7f0000000000, 4 * MiB, 1).alloc(200, 0x7f0000400000, 8 * MiB, 2).free(300, 0x7f0000400000);
  b.alloc(600, 0x7f0000400000, 2 * MiB, 2).free(900, 0x7f0000000000).end(1000);
  HtmlDataOptions opt;
  opt.buckets = 10;
  const Json d = data_of(b, opt);
  REQUIRE(d.at("duration_ns") == 1000);
  REQUIRE(d.at("time_range_ns") == Json::array({100, 900}));
  const Json& rf = d.at("range_flame");
  CHECK(rf.at("start_ns") == 0);
  CHECK(rf.at("bucket_ns") == 101);
  CHECK(rf.at("buckets") == 9);
  REQUIRE(rf.at("paths").size() == 2);
  CHECK(rf.at("paths").at(0) != rf.at("paths").at(1));
  const Json none = Json::array();
  const Json want = Json::array({
      Json::array({0, 100, 4 * MiB, Json::array({0, 4 * MiB})}),
      Json::array({1, 200, 12 * MiB, Json::array({1, 8 * MiB})}),
      Json::array({2, 202, 12 * MiB, none}),
      Json::array({3, 303, 4 * MiB, Json::array({1, 0})}),
      Json::array({4, 404, 4 * MiB, none}),
      Json::array({5, 600, 6 * MiB, Json::array({1, 2 * MiB})}),
      Json::array({6, 606, 6 * MiB, none}),
      Json::array({7, 707, 6 * MiB, none}),
      Json::array({8, 808, 6 * MiB, none}),
  });
  REQUIRE(rf.at("devices").size() == 1);
  CHECK(rf.at("devices").at(0).at("device") == 0);
  CHECK(rf.at("devices").at(0).at("buckets") == want);
}

TEST_CASE("html: a stripped program's _start, unnamed outside __libc_start_main, folds with libc's start-up") {
  // 1 MiB from alloc_buffers ← main ← __libc_start_main ← a frame of prog with no name (its
  // _start: the program is stripped), the stack's nodes from the outermost.
  TraceBuilder b;
  b.process().device(0, 1ull << 30);
  b.module(0, 0x400000, 0x500000, "/usr/bin/prog");
  b.module(0, 0x7f0000000000, 0x7f0000100000, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  b.stack(1, 0, 0x400010).stack(2, 1, 0x7f0000000100).stack(3, 2, 0x400100).stack(4, 3, 0x400200);
  b.symbol(0x7f0000000100, "__libc_start_main", "", 0).symbol(0x400100, "main", "prog.c", 30);
  b.symbol(0x400200, "alloc_buffers", "prog.c", 12);
  b.alloc(10, 0x7000000000, 1 << 20, 4).end(20);
  const Json d = data_of(b);
  std::map<std::string, int> folds;
  for (size_t i = 0; i < d.at("labels").size(); ++i)
    folds[d.at("labels")[i].get<std::string>()] = d.at("label_folds")[i].get<int>();
  INFO(d.at("labels").dump());
  // The unnamed frame reads as its offset in prog (load bias 0: 0x400010). Before: it did not fold.
  CHECK(folds == std::map<std::string, int>{{"alloc_buffers at prog.c:12 (prog)", 0},
                                            {"main at prog.c:30 (prog)", 0},
                                            {"__libc_start_main (libc.so.6)", 1},
                                            {"prog+0x400010 (prog)", 1}});
}

TEST_CASE("html: a range flame bucket's highest moment, taken during the replay, undoes what came after it") {
  // One bucket holds the whole range (one timeline bucket of 1,000 / 1 + 1 = 1,001 ns).
  // Stack 3 makes P (2 MiB) at 100 ns, stack 1 Q (1 MiB) at 120, stack 2 R (4 MiB) at 150:
  // 7 MiB, the bucket's highest. After it, in the same bucket: R freed at 160, P at 170,
  // stack 4 makes S (1 MiB) at 180, Q freed at 190; at the end only S is live. At 150, by
  // hand: stack 1 1 MiB, stack 2 4 MiB, stack 3 2 MiB, and no stack 4. A device of its
  // own: device 1's T (16 MiB, stack 4, at 130) is never undone into device 0's bucket.
  // Paths are numbered moment by moment (device 1's, at event 2, first: path 0 is stack 4),
  // within a moment in stack id order: paths 1, 2, 3 are stacks 1, 2, 3.
  constexpr uint64_t MiB = 1 << 20;
  TraceBuilder b;
  b.process().stack(1, 0, 0x1000).stack(2, 0, 0x2000).stack(3, 0, 0x3000).stack(4, 0, 0x4000);
  b.alloc(100, 0x7f0000000000, 2 * MiB, 3).alloc(120, 0x7f0000200000, MiB, 1);
  b.alloc(130, 0x7f1000000000, 16 * MiB, 4, /*device=*/1);
  b.alloc(150, 0x7f0000400000, 4 * MiB, 2).free(160, 0x7f0000400000).free(170, 0x7f0000000000);
  b.alloc(180, 0x7f0000800000, MiB, 4).free(190, 0x7f0000200000).end(1000);
  HtmlDataOptions opt;
  opt.buckets = 1;
  const Json d = data_of(b, opt);
  REQUIRE(d.at("time_range_ns") == Json::array({100, 190}));
  const Json& rf = d.at("range_flame");
  CHECK(rf.at("buckets") == 1);
  REQUIRE(rf.at("paths").size() == 4);
  const Json& labels = d.at("labels");
  for (size_t i = 0; i < 4; ++i) {
    const std::string innermost = labels.at(rf.at("paths").at(i).back().get<size_t>()).get<std::string>();
    CHECK(innermost.find("0x" + std::to_string(i ? i : 4) + "000") != std::string::npos);
  }
  const Json& devices = rf.at("devices");
  REQUIRE(devices.size() == 2);
  CHECK(devices.at(0).at("device") == 0);
  CHECK(devices.at(0).at("buckets") ==
        Json::array({Json::array({0, 150, 7 * MiB, Json::array({1, MiB, 2, 4 * MiB, 3, 2 * MiB})})}));
  // Device 1's one change, T at 130 ns: its highest.
  CHECK(devices.at(1).at("device") == 1);
  CHECK(devices.at(1).at("buckets") == Json::array({Json::array({0, 130, 16 * MiB, Json::array({0, 16 * MiB})})}));
}
