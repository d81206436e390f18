// A pool that tells NVTX's memory extension what it hands out (programs/nvtx_pool.c, whose
// comment gives every figure): the tracer is the extension's tool under `cumemtrace run`,
// alone or chained to a profiler's (programs/nvtx_tool.c), and the report shows the inside
// of the pool's slabs.
#include <catch2/catch.hpp>

#include <string>

#include "harness.h"
#include "sizes.h"

using namespace harness;
using nlohmann::json;

namespace {

// The pools section of the report of nvtx_pool traced under `cumemtrace run` with `env`.
json pools_of_run(const Env& env, Result& r) {
  TempDir dir;
  r = run({cli(), "run", "-o", dir.path + "/t-%p.trace", "--", here("nvtx_pool")}, env);
  REQUIRE(r.exit_code == 0);
  const auto traces = dir.files("t-");
  REQUIRE(traces.size() == 1);
  return report(traces[0]).at("pools");
}

// What does not depend on addresses, handles or times.
json figures(json pools) {
  for (auto& h : pools.at("heaps")) {
    for (const char* k : {"handle", "address", "registered_ns", "unregistered_ns", "allocation"}) h.erase(k);
    h.at("peak").erase("time_ns");
    for (auto& s : h.at("sites")) s.erase("frames"), s.erase("call_site_id");
  }
  return pools;
}

}  // namespace

TEST_CASE("a pool's NVTX heaps and regions: its slab's peak, leak and fragmentation inside, under cumemtrace run") {
  Result r;
  const json p = pools_of_run({}, r);
  CHECK(r.out == "pool: 2 heaps, two handles\n");  // our heap handles: one each
  CHECK(p.at("unknown_references") == 0);
  REQUIRE(p.at("heaps").size() == 2);
  const json& slab = p.at("heaps").at(0);
  CHECK(slab.at("name") == "slab");
  CHECK(slab.at("usage") == 1);
  CHECK(slab.at("size") == 64 * MiB);
  CHECK(slab.at("device") == 0);
  CHECK(slab.at("allocation").at("size") == 64 * MiB);
  CHECK(slab.at("allocation").at("address") == slab.at("address"));
  CHECK(slab.at("regions_registered") == 13);
  CHECK(slab.at("bytes_registered") == 72 * MiB);
  CHECK(slab.at("peak").at("bytes") == 43 * MiB);
  CHECK(slab.at("peak").at("count") == 7);
  CHECK(slab.at("peak").at("inside").at("gap_bytes") == 21 * MiB);
  CHECK(slab.at("peak").at("inside").at("largest_gap") == 8 * MiB);
  CHECK(slab.at("end").at("bytes") == 32 * MiB);
  CHECK(slab.at("end").at("count") == 5);
  CHECK(slab.at("unregistered_ns").is_null());
  const json& sites = slab.at("sites");
  REQUIRE(sites.size() == 4);
  CHECK(sites.at(0).at("name") == "kv-block");
  CHECK(sites.at(0).at("class") == "leak");
  CHECK(sites.at(0).at("growth_per_iteration") == 4 * MiB);
  CHECK(sites.at(0).at("bytes_at_boundaries") == json::array({0, 4 * MiB, 8 * MiB, 12 * MiB, 16 * MiB}));
  CHECK(sites.at(1).at("name") == "weights");
  CHECK(sites.at(1).at("class") == "one-time");
  // scratch and grow: one helper, region(), called from two lines of step(), are two sites
  // (docs/cli.md, "Call sites in the user's terms"): 4 each, 8 MiB, and 2 MiB resized to 3.
  CHECK(sites.at(2).at("name") == "");
  CHECK(sites.at(2).at("class") == "transient");
  CHECK(sites.at(2).at("registered") == 4);
  CHECK(sites.at(2).at("peak_bytes") == 8 * MiB);
  CHECK(sites.at(3).at("name") == "");
  CHECK(sites.at(3).at("class") == "transient");
  CHECK(sites.at(3).at("registered") == 4);
  CHECK(sites.at(3).at("peak_bytes") == 3 * MiB);
  // NVTX's own functions are the pool's frames: the site is the program's helper.
  CHECK(sites.at(0).at("frames").at(0).at("function") == "region");
  // Named by the call-site rule: region() and the nearest caller that tells its sites apart.
  // Six sites share region(): step's lines 105, 107, 108 (each called from main:125), main's
  // 123, and the staging heap's two from main's 128, 129. They differ at their first caller,
  // and three callers share each name (step, main): so each with its line.
  CHECK(sites.at(0).at("site") == "region ← step at nvtx_pool.c:105");
  CHECK(sites.at(1).at("site") == "region ← main at nvtx_pool.c:123");
  CHECK(sites.at(2).at("site") == "region ← step at nvtx_pool.c:107");
  CHECK(sites.at(3).at("site") == "region ← step at nvtx_pool.c:108");

  const json& staging = p.at("heaps").at(1);
  CHECK(staging.at("name") == "staging");
  CHECK(staging.at("resets") == 1);
  CHECK(!staging.at("unregistered_ns").is_null());
  CHECK(staging.at("peak").at("bytes") == 2 * MiB);
  CHECK(staging.at("end").at("bytes") == 0);
}

TEST_CASE("check --max-pool-growth fails a CI job on the leak inside the pool, inclusive limit, by device") {
  TempDir dir;
  REQUIRE(run({cli(), "run", "-o", dir.path + "/t-%p.trace", "--", here("nvtx_pool")}).exit_code == 0);
  const std::string trace = dir.files("t-").at(0);
  CHECK(run({cli(), "check", trace, "--max-pool-growth", "4MiB"}).exit_code == 0);
  const Result bad = run({cli(), "check", trace, "--max-pool-growth", "4194303"});
  CHECK(bad.exit_code == 1);
  CHECK(has(bad.out,
            "max-pool-growth: growth per iteration inside pools: 4.00 MiB (4,194,304 B), limit 4.00 MiB "
            "(4,194,303 B); leaking \"kv-block\" regions of heap \"slab\" from region ← step at nvtx_pool.c:105\n"));
  CHECK(run({cli(), "check", trace, "--max-pool-growth", "d0:1B"}).exit_code == 1);
  CHECK(run({cli(), "check", trace, "--max-pool-growth", "d1:1B"}).exit_code == 0);  // no heap on device 1
  // The device's own growth: none (the slab does not grow).
  CHECK(run({cli(), "check", trace, "--max-growth", "0"}).exit_code == 0);
}

TEST_CASE("without a tool the pool's NVTX calls are no-ops: it runs the same, and no pool is in its trace") {
  const Result plain = run({here("nvtx_pool")});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out == "pool: 2 heaps, one handle\n");  // NVTX's no-op returns no handle
  TempDir dir;
  const Result t = traced(dir, {here("nvtx_pool")});  // preloaded, but NVTX_INJECTION64_PATH unset
  REQUIRE(t.exit_code == 0);
  CHECK(!report(only_trace(dir)).contains("pools"));
}

TEST_CASE("chained to a profiler's NVTX tool, the tool sees every pool call and the report's figures are the same") {
  Result alone, chained;
  const json ours = pools_of_run({}, alone);
  const json with_tool = pools_of_run({{"NVTX_INJECTION64_PATH", here("libnvtx_tool.so")}}, chained);
  // The tool's heap handles (0x7001, 0x7002) are what the program holds, and its region
  // handles (address + 1) come back to it: 4 grow regions unregistered by its handles.
  CHECK(chained.out == "pool: 2 heaps, two handles\n");
  CHECK(has(chained.err, "tool: 2 heaps, 15 regions registered, 4 unregistered by its handles, 4 by pointer\n"));
  CHECK(with_tool.at("heaps").at(0).at("handle") == "0x7001");
  CHECK(figures(with_tool) == figures(ours));
}

// Review of 2026-12-04 (programs/nvtx_pool_abuse.c).
TEST_CASE("a chained tool's region handles are forgotten at their unregister: 70,000 of them all find their region") {
  TempDir dir;
  const Env tool{{"NVTX_INJECTION64_PATH", here("libnvtx_tool.so")}};
  const Result r =
      run({cli(), "run", "-o", dir.path + "/t-%p.trace", "--", here("nvtx_pool_abuse"), "handles", "70000"}, tool);
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.err, "tool: 1 heaps, 70000 regions registered, 70000 unregistered by its handles, 0 by pointer\n"));
  const json p = report(dir.files("t-").at(0)).at("pools");
  CHECK(p.at("unknown_references") == 0);  // 4,464 before: the map of 65,536 handles was full
  CHECK(p.at("heaps").at(0).at("end").at("count") == 0);
}

TEST_CASE("a heap named by a registered-string handle no one registered: the program runs on, the name says so") {
  TempDir dir;
  const Result r = run({cli(), "run", "-o", dir.path + "/t-%p.trace", "--", here("nvtx_pool_abuse"), "badstring"});
  CHECK(r.exit_code == 0);  // SIGSEGV before: the handle was read as a string
  CHECK(r.out == "a heap named by a handle no one registered\n");
  CHECK(report(dir.files("t-").at(0)).at("pools").at("heaps").at(0).at("name") == "(registered string)");
}

TEST_CASE("pool records the disk cannot take are counted as dropped, and the pools section says so") {
  TempDir dir;
  const Env small{{"CUMEMTRACE_BUFFER_MB", "1"}};
  const Result r =
      run({cli(), "run", "-o", dir.path + "/t-%p.trace", "--", here("nvtx_pool_abuse"), "batch", "100000"}, small);
  REQUIRE(r.exit_code == 0);
  const std::string trace = dir.files("t-").at(0);
  const json j = report(trace);
  CHECK(j.at("integrity").at("events_dropped").get<uint64_t>() > 0);  // 0 before: lost unsaid
  const Result text = run({cli(), "report", trace});
  CHECK(has(text.out, "records, the disk being behind: these figures may lack some of the pools' calls)"));
}
