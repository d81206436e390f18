// A program's own allocation helper called from three places (programs/helper_sites.c):
// three sites, told apart by the nearest caller (docs/cli.md, "Call sites in the user's
// terms"), in the report, the growth analysis, baselines and diff, the same in two runs.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>

#include "harness.h"
#include "sizes.h"

using namespace harness;

namespace {

std::string traced_steps(const TempDir& dir, const std::string& name) {
  REQUIRE(run({cli(), "run", "-o", dir.path + "/" + name + "-%p.trace", "--", here("helper_sites")}).exit_code == 0);
  return dir.files(name + "-").at(0);
}

// The call-site keys of a baseline file, with their figures.
std::map<std::string, std::pair<uint64_t, uint64_t>> baseline_sites(const std::string& file) {
  std::ifstream in(file);
  const nlohmann::json baseline = nlohmann::json::parse(in);
  std::map<std::string, std::pair<uint64_t, uint64_t>> out;
  for (const auto& s : baseline.at("call_sites")) out[s.at("key")] = {s.at("bytes_at_peak"), s.at("leaked")};
  return out;
}

}  // namespace

TEST_CASE("an allocation helper called from three places is three sites, named by the caller that tells them apart") {
  TempDir dir;
  const std::string trace = traced_steps(dir, "a");
  const auto r = report(trace);
  // At the peak (the fifth step): weights 64 MiB, the history 5 × 8 = 40 MiB, the step's
  // activations 32 MiB; 136 MiB in all.
  const auto& d = device(r, 0);
  CHECK(d.at("peak").at("device_bytes") == 142606336);
  const auto& top = d.at("top_call_sites");
  REQUIRE(top.size() == 3);
  CHECK(top.at(0).at("site") == "alloc ← load_weights");
  CHECK(top.at(0).at("bytes") == 67108864);
  CHECK(top.at(0).at("count") == 1);
  CHECK(top.at(1).at("site") == "alloc ← keep_history");
  CHECK(top.at(1).at("bytes") == 41943040);
  CHECK(top.at(1).at("count") == 5);
  CHECK(top.at(2).at("site") == "alloc ← forward");
  CHECK(top.at(2).at("bytes") == 33554432);
  CHECK(top.at(2).at("count") == 1);

  // Growth over the five "step" ranges: the history alone leaks, 8 MiB per step; the
  // weights are one-time, the activations transient (one made and freed per step).
  const auto& g = r.at("growth");
  CHECK(g.at("iterations") == 5);
  REQUIRE(g.at("sites").size() == 3);
  const auto& leak = g.at("sites").at(0);
  CHECK(leak.at("class") == "leak");
  CHECK(leak.at("site") == "alloc ← keep_history");
  CHECK(leak.at("growth_per_iteration") == 8388608);
  CHECK(leak.at("bytes_at_boundaries") == nlohmann::json::array({0, 8388608, 16777216, 25165824, 33554432, 41943040}));
  const auto& weights = g.at("sites").at(1);
  CHECK(weights.at("class") == "one-time");
  CHECK(weights.at("site") == "alloc ← load_weights");
  CHECK(weights.at("live_bytes_end") == 67108864);
  const auto& activations = g.at("sites").at(2);
  CHECK(activations.at("class") == "transient");
  CHECK(activations.at("site") == "alloc ← forward");
  CHECK(activations.at("allocations_within") == 5);

  // The text says the same: the summary's holders and the growth line name the caller.
  const Result text = run({cli(), "report", trace});
  REQUIRE(text.exit_code == 0);
  CHECK(has(text.out,
            "; held by 64.00 MiB from alloc at helper_sites.c:26 ← load_weights, 40.00 MiB from alloc at "
            "helper_sites.c:26 ← keep_history, 32.00 MiB from alloc at helper_sites.c:26 ← forward\n"));
  CHECK(has(text.out, "+8.00 MiB from alloc at helper_sites.c:26 ← keep_history\n"));
  const Result growth = run({cli(), "check", trace, "--max-growth", "8388607"});
  CHECK(growth.exit_code == 1);
  CHECK(has(growth.out, "; leaking from helper_sites (alloc ← keep_history)\n"));
}

TEST_CASE("an allocation helper's three sites keep their keys from one run to the next") {
  TempDir dir;
  const std::string first = traced_steps(dir, "a"), second = traced_steps(dir, "b");
  const std::string file = dir.path + "/baseline.json", again = dir.path + "/again.json";
  REQUIRE(run({cli(), "baseline", first, "-o", file}).exit_code == 0);
  REQUIRE(run({cli(), "baseline", second, "-o", again}).exit_code == 0);
  // Keyed by alloc's own line (26) and the calling line in each caller (31, 36, 40).
  const std::map<std::string, std::pair<uint64_t, uint64_t>> expected = {
      {"helper_sites alloc helper_sites.c:26 <- forward helper_sites.c:36", {33554432, 0}},
      {"helper_sites alloc helper_sites.c:26 <- keep_history helper_sites.c:40", {41943040, 41943040}},
      {"helper_sites alloc helper_sites.c:26 <- load_weights helper_sites.c:31", {67108864, 67108864}}};
  CHECK(baseline_sites(file) == expected);
  CHECK(baseline_sites(again) == expected);
  // The second run against the first: nothing new, gone or changed, at no tolerance.
  CHECK(run({cli(), "check", second, "--baseline", file, "--tolerance", "0%"}).exit_code == 0);
  const Result d = run({cli(), "diff", file, second, "--json"});
  REQUIRE(d.exit_code == 0);
  CHECK(nlohmann::json::parse(d.out).at("call_sites").empty());
}

TEST_CASE("report --view tree names an unsymbolized trace's frames with the symbols report finds, as its tables do") {
  // Traced under LD_PRELOAD, not `run`: the trace holds no Symbol record. Top-down, --top 1:
  // main (all 11 allocations, 64 + 5 × 32 + 5 × 8 = 264 MiB), forward's 5 × 32 MiB below it
  // (the most bytes), alloc below that, and load_weights and keep_history counted.
  TempDir dir;
  REQUIRE(traced(dir, {here("helper_sites")}).exit_code == 0);
  const Result r = run({cli(), "report", only_trace(dir), "--view", "tree", "--top", "1"});
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        "Top-down tree: each frame with the bytes and allocations made below it (device memory: 11 allocations, "
        "264.00 MiB (276,824,064 B) in all)\n"
        "  main [helper_sites]: 264.00 MiB (276,824,064 B), 11 allocations\n"
        "    forward [helper_sites]: 160.00 MiB (167,772,160 B), 5 allocations\n"
        "      alloc [helper_sites]: 160.00 MiB (167,772,160 B), 5 allocations\n"
        "    ... and 2 more frames (--top)\n");
}
