// The JSON's lists of iteration boundaries (docs/report-json.md, "Growth across iterations"):
// the first 8 and the last 8 past 16, every one with `--all-boundaries`; the values below
// worked out by hand from the trace's times.
#include <string>
#include <vector>

#include "catch.h"
#include "parse_built.h"
#include "render/report_json.h"
#include "render/report_parts.h"
#include "reports/report.h"
#include "shell.h"
#include "temp_dir.h"

using namespace cumemtrace;
using cumemtrace::test::parse;
using cumemtrace::test::TraceBuilder;
using json = nlohmann::json;
namespace fmt = cumemtrace::format;

namespace {

constexpr uint64_t kHeapAt = 0x100000, kTensorsAt = 0x7f0000000000;
// A name of its own, not sizes.h's MiB: a batched build may put this file beside one that
// defines its own MiB.
constexpr uint64_t kTensorBytes = 1ull << 20;

// Marks "step" at 100, 200, ..., 3900 (39 marks), a clean end at 4000: 40 boundaries,
// boundary j (0-39) at 100 (j + 1). After each mark k (0-38): at 100 (k + 1) + 10 a 1 MiB
// allocation of stack 1 never freed, and at 100 (k + 1) + 20 a 50 B region of stack 2 in
// heap 0x10 (over the 4096 B allocation at kHeapAt, t=5), never unregistered. So j of each were
// made before boundary j: the driver's site holds j MiB there and the pool's 50 j B.
TraceBuilder forty_boundaries() {
  TraceBuilder b;
  b.process().device(0, 1ull << 36).stack(1, 0, 0x4001).stack(2, 0, 0x4002);
  b.alloc(5, kHeapAt, 4096);
  b.nvtx_mem(10, fmt::NvtxMemOp::kHeapRegister, 0x10, kHeapAt, 4096, 1, "a", 1);
  for (uint64_t k = 0; k < 39; ++k) {
    const uint64_t t = 100 * (k + 1);
    b.mark(t, "step");
    b.alloc(t + 10, kTensorsAt + k * kTensorBytes, kTensorBytes, 1);
    b.nvtx_mem(t + 20, fmt::NvtxMemOp::kRegionRegister, 0x10, kHeapAt + 50 * k, 50, 2);
  }
  b.end(4000);
  return b;
}

// Boundary j's time, and `per` × j for each listed j.
std::vector<uint64_t> boundary_times(const std::vector<uint64_t>& js) {
  std::vector<uint64_t> out;
  for (uint64_t j : js) out.push_back(TraceBuilder::kStart + 100 * (j + 1));
  return out;
}
std::vector<uint64_t> per_boundary(const std::vector<uint64_t>& js, uint64_t per) {
  std::vector<uint64_t> out;
  for (uint64_t j : js) out.push_back(per * j);
  return out;
}
const std::vector<uint64_t> kListedBoundaries = {0, 1, 2, 3, 4, 5, 6, 7, 32, 33, 34, 35, 36, 37, 38, 39};
std::vector<uint64_t> all_forty() {
  std::vector<uint64_t> js;
  for (uint64_t j = 0; j < 40; ++j) js.push_back(j);
  return js;
}

json growth_site_at(const json& sites, const std::string& ip) {
  for (const auto& s : sites)
    if (!s.at("frames").empty() && s.at("frames").at(0).at("ip") == ip) return s;
  FAIL("no site at " << ip);
  return {};
}

}  // namespace

TEST_CASE("boundary listing: all of 16, the first and last 8 of 17, all when asked") {
  std::vector<uint64_t> sixteen;
  for (uint64_t j = 0; j < 16; ++j) sixteen.push_back(100 + j);
  CHECK(BoundaryListing{16, false}.omitted() == 0);
  CHECK(BoundaryListing{16, false}.listed(sixteen) == json(sixteen));
  std::vector<uint64_t> seventeen;
  for (uint64_t j = 0; j < 17; ++j) seventeen.push_back(j);
  CHECK(BoundaryListing{17, false}.omitted() == 1);  // the 9th, j = 8
  CHECK(BoundaryListing{17, false}.listed(seventeen) ==
        json(std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16}));
  CHECK(BoundaryListing{17, true}.omitted() == 0);
  CHECK(BoundaryListing{17, true}.listed(seventeen) == json(seventeen));
  CHECK(BoundaryListing{0, false}.listed({}) == json::array());
}

TEST_CASE("report JSON over 40 boundaries: 16 listed with the count, every one with --all-boundaries") {
  const Report r = build_report(parse(forty_boundaries()), ReportOptions{});
  REQUIRE(r.growth.boundaries_ns == boundary_times(all_forty()));

  const json bounded = json::parse(to_json(r).dump());
  CHECK(bounded.at("schema_version") == 3);  // boundaries_ns no longer lists them all
  const json& g = bounded.at("growth");
  CHECK(g.at("iterations") == 39);
  CHECK(g.at("boundaries_total") == 40);
  CHECK(g.at("boundaries_omitted") == 24);
  CHECK(g.at("boundaries_ns") == json(boundary_times(kListedBoundaries)));
  const json leak = growth_site_at(g.at("sites"), "0x4001");
  CHECK(leak.at("class") == "leak");
  CHECK(leak.at("bytes_at_boundaries") == json(per_boundary(kListedBoundaries, kTensorBytes)));
  // Worked out from every boundary, not the listed ones: 39 MiB at the last.
  CHECK(leak.at("growth_per_iteration") == kTensorBytes);
  CHECK(leak.at("live_bytes_end") == 39 * kTensorBytes);
  const json& region = bounded.at("pools").at("heaps").at(0).at("sites").at(0);
  CHECK(region.at("bytes_at_boundaries") == json(per_boundary(kListedBoundaries, 50)));
  CHECK(region.at("growth_per_iteration") == 50);

  const json all = json::parse(to_json(r, JsonOptions{true}).dump());
  CHECK(all.at("growth").at("boundaries_total") == 40);
  CHECK(all.at("growth").at("boundaries_omitted") == 0);
  CHECK(all.at("growth").at("boundaries_ns") == json(boundary_times(all_forty())));
  CHECK(growth_site_at(all.at("growth").at("sites"), "0x4001").at("bytes_at_boundaries") ==
        json(per_boundary(all_forty(), kTensorBytes)));
  CHECK(all.at("pools").at("heaps").at(0).at("sites").at(0).at("bytes_at_boundaries") ==
        json(per_boundary(all_forty(), 50)));
}

TEST_CASE("report --all-boundaries: every boundary in the JSON, a usage error without --json") {
  cumemtrace::test::TempDir dir;
  const std::string trace = dir.path + "/forty.trace";
  forty_boundaries().write(trace);
  using cumemtrace::test::kCli;
  using cumemtrace::test::shell;
  const auto bounded = shell(kCli + " report --json " + trace + " 2>/dev/null");
  REQUIRE(bounded.status == 0);
  CHECK(json::parse(bounded.out).at("growth").at("boundaries_ns").size() == 16);
  const auto all = shell(kCli + " report --json --all-boundaries " + trace + " 2>/dev/null");
  REQUIRE(all.status == 0);
  CHECK(json::parse(all.out).at("growth").at("boundaries_ns") == json(boundary_times(all_forty())));
  const auto text = shell(kCli + " report --all-boundaries " + trace + " 2>&1");
  CHECK(text.status == 2);
  CHECK(text.out.find("--all-boundaries requires --json") != std::string::npos);
}
