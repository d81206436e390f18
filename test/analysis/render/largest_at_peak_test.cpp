// `report`'s largest allocations at the peak (reports/sections/largest_at_peak.h): the text
// lines and the JSON keys of a small trace, worked out by hand.
#include <sstream>

#include "catch.h"
#include "parse_built.h"
#include "render/report/largest_at_peak_section.h"
#include "render/report_text.h"
#include "report_both.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::report_both;
using cumemtrace::test::TraceBuilder;
using fmt_kind = cumemtrace::format::Kind;

namespace {

constexpr uint64_t kMs = 1'000'000;

// Device 0, times in ms after the start (thread 7, TraceBuilder's):
//   1 A 4096 B big_alloc    2 B 1024 B small_alloc    3 C 8192 B big_alloc
//   4 D 1024 B small_alloc  5 E 512 B small_alloc     5.5 G 100000 B managed (no device bytes)
//   6 F 256 B, no stack     8 C freed                  9 end
// Device bytes: 4096, 5120, 13312, 14336, 14848, 15104 at 6 ms (the peak), then 6912.
// Live at the peak and holding device memory: A B C D E F (G is managed): 6. The largest
// five, largest first and of one size the older first: C 8192 (made 3 ms before the peak),
// A 4096 (5 ms), B 1024 (4 ms), D 1024 (2 ms), E 512 (1 ms); F is the one more.
TraceBuilder largest_trace() {
  TraceBuilder b;
  b.process()
      .device(0, 80ull << 30)
      .api(1, "cudaMalloc")
      .api(2, "cudaFree")
      .module(0, 0x4000, 0x5000, "/work/prog")
      .stack(1, 0, 0x4100)
      .stack(2, 1, 0x4200)
      .stack(3, 1, 0x4300)
      .symbol(0x4100, "main", "prog.cpp", 5)
      .symbol(0x4200, "big_alloc", "prog.cpp", 20)
      .symbol(0x4300, "small_alloc", "prog.cpp", 30);
  b.alloc(1 * kMs, 0x10000, 4096, 2)
      .alloc(2 * kMs, 0x20000, 1024, 3)
      .alloc(3 * kMs, 0x30000, 8192, 2)
      .alloc(4 * kMs, 0x40000, 1024, 3)
      .alloc(5 * kMs, 0x50000, 512, 3)
      .alloc(5 * kMs + kMs / 2, 0x90000, 100000, 3, 0, fmt_kind::kManaged)
      .alloc(6 * kMs, 0x60000, 256)
      .free(8 * kMs, 0x30000)
      .end(9 * kMs);
  return b;
}

}  // namespace

TEST_CASE("largest at the peak: the five largest allocations live at a device's peak, and how many more") {
  const Report rep = report_both(largest_trace());
  std::ostringstream text;
  largest_at_peak_text(text, rep);
  CHECK(text.str() ==
        "\nLargest allocations live at the peak\n"
        "  device 0, peak at 0.006 s: 6 allocations live\n"
        "    1. 8.00 KiB (8,192 B) of device memory, made at 0.003 s (3.000 ms before the peak), thread 7: big_alloc "
        "at prog.cpp:20\n"
        "    2. 4.00 KiB (4,096 B) of device memory, made at 0.001 s (5.000 ms before the peak), thread 7: big_alloc "
        "at prog.cpp:20\n"
        "    3. 1.00 KiB (1,024 B) of device memory, made at 0.002 s (4.000 ms before the peak), thread 7: "
        "small_alloc at prog.cpp:30\n"
        "    4. 1.00 KiB (1,024 B) of device memory, made at 0.004 s (2.000 ms before the peak), thread 7: "
        "small_alloc at prog.cpp:30\n"
        "    5. 512 B of device memory, made at 0.005 s (1.000 ms before the peak), thread 7: small_alloc at "
        "prog.cpp:30\n"
        "    ... and 1 more allocation\n");

  // In the whole text it follows the device's section, before what is held at exit.
  std::ostringstream whole;
  write_text(whole, rep);
  const std::string all = whole.str();
  const size_t device = all.find("\nDevice 0"), largest = all.find("\nLargest allocations live at the peak\n");
  REQUIRE(largest != std::string::npos);
  CHECK(device < largest);
  CHECK(all.find(text.str()) == largest);

  nlohmann::ordered_json j;
  largest_at_peak_json(j, rep, JsonContext{});
  REQUIRE(j["largest_at_peak"].size() == 1);
  const auto& d = j["largest_at_peak"][0];
  CHECK(d["device"] == 0);
  CHECK(d["peak_time_ns"] == TraceBuilder::kStart + 6 * kMs);
  CHECK(d["live"] == 6);
  CHECK(d["omitted"] == 1);
  REQUIRE(d["allocations"].size() == 5);
  const auto& c = d["allocations"][0];
  CHECK(c["size"] == 8192);
  CHECK(c["kind"] == "device");
  CHECK(c["address"] == "0x30000");
  CHECK(c["time_ns"] == TraceBuilder::kStart + 3 * kMs);
  CHECK(c["since_start_ns"] == 3 * kMs);
  CHECK(c["age_ns"] == 3 * kMs);
  CHECK(c["tid"] == 7);
  CHECK(c["site"] == "big_alloc");
  CHECK(c["library"] == "prog");
  CHECK(c["frames"].size() == 2);  // big_alloc, then main
  CHECK(c["python_frames"].size() == 0);
  // The rest in order: sizes and ages as worked out above.
  const std::vector<uint64_t> sizes = {8192, 4096, 1024, 1024, 512}, ages_ms = {3, 5, 4, 2, 1};
  for (size_t i = 0; i < 5; ++i) {
    CHECK(d["allocations"][i]["size"] == sizes[i]);
    CHECK(d["allocations"][i]["age_ns"] == ages_ms[i] * kMs);
  }
  // The whole report's JSON has the key right after the devices.
  const nlohmann::ordered_json r = report_json(rep);
  CHECK(r["largest_at_peak"] == j["largest_at_peak"]);
}

TEST_CASE("largest at the peak: no device memory ever live, no text and an empty list") {
  TraceBuilder b;
  b.process().device(0, 80ull << 30).api(1, "cudaMalloc");
  b.alloc(1000, 0x90000, 4096, 0, 0, fmt_kind::kManaged).end(2000);  // managed only: no device bytes
  const Report rep = report_both(b);
  std::ostringstream text;
  largest_at_peak_text(text, rep);
  CHECK(text.str().empty());
  nlohmann::ordered_json j;
  largest_at_peak_json(j, rep, JsonContext{});
  CHECK(j["largest_at_peak"] == nlohmann::ordered_json::array());
}
