// The fragmentation figures of real traces, for the reference layouts of
// docs/fragmentation.md as the simulated driver lays them out (docs/simulated-driver.md).
// Each program leaves its layout live at exit (hold = -1), so the end state is it.
#include <catch2/catch.hpp>

#include "harness.h"

using namespace harness;

namespace {

nlohmann::json end_fragmentation(const std::string& scenario) {
  TempDir dir;
  const Result t = traced(dir, {program("prog_runtime"), scenario, "-1"});
  REQUIRE(t.exit_code == 0);
  return device(live_at_end(only_trace(dir)), 0).at("fragmentation");
}

}  // namespace

TEST_CASE("three packed 512 B blocks with a hole: one page, nearly all gap") {
  const auto f = end_fragmentation("frag1");
  CHECK(f.at("arena_count") == 1);
  CHECK(f.at("arena_bytes") == 2097152);
  CHECK(f.at("gap_bytes") == 2095616);
  CHECK(f.at("largest_gap") == 2095104);
  CHECK(f.at("gap_ratio").get<double>() == Approx(0.99926758).epsilon(1e-8));
  CHECK(f.at("external_fragmentation").get<double>() == Approx(0.00024432).margin(1e-8));
}

TEST_CASE("two 64 MiB blocks around a freed one: two arenas, no gap") {
  const auto f = end_fragmentation("frag2");
  CHECK(f.at("arena_count") == 2);
  CHECK(f.at("arena_bytes") == 134217728);
  CHECK(f.at("gap_bytes") == 0);
}

TEST_CASE("a 3 MiB block holds two granules") {
  const auto f = end_fragmentation("frag3");
  CHECK(f.at("arena_bytes") == 4194304);
  CHECK(f.at("largest_gap") == 1048576);
  CHECK(f.at("gap_ratio").get<double>() == 0.25);
}

TEST_CASE("the second half of a page still live after the first half is freed") {
  const auto f = end_fragmentation("frag4");
  CHECK(f.at("gap_bytes") == 1048576);
  CHECK(f.at("gap_ratio").get<double>() == 0.5);
}

TEST_CASE("512 B in two distant pages") {
  const auto f = end_fragmentation("frag5");
  CHECK(f.at("arena_count") == 2);
  CHECK(f.at("gap_bytes") == 4193280);
  CHECK(f.at("largest_gap") == 2096640);
}

TEST_CASE("the tracker's own snapshot at exit agrees with the replay") {
  TempDir dir;
  REQUIRE(traced(dir, {program("prog_runtime"), "frag1", "-1"}).exit_code == 0);
  const Result dump = run({cli(), "dump", only_trace(dir)});
  REQUIRE(dump.exit_code == 0);
  // The exit snapshot (reason 3) carries the live tracker's arena figure for device 0.
  CHECK(dump.out.find("reason=3") != std::string::npos);
  CHECK(dump.out.find("[dev=0 device_bytes=1536 peak=2048 arena=2097152") != std::string::npos);
}
