// The blocks inside a caching allocator (reports/cache/blocks.h): the stand-in for PyTorch's
// (sim/torch/) reports them as libc10_cuda.so does, the preload library records them, and
// the report finds the tensor kept per iteration and each out-of-memory error's cause.
// programs/torch_blocks.c's comment works out every figure.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "harness.h"
#include "sizes.h"

using namespace harness;
using nlohmann::json;

TEST_CASE("blocks: a tensor kept per iteration inside the cache is a leak at its call site") {
  TempDir dir;
  const Result r = traced(dir, {here("torch_blocks"), "loop"}, one_gib_device());
  REQUIRE(r.exit_code == 0);
  // Every report reached the stand-in libc10 (11 blocks allocated, 5 freed): the tracer
  // forwards what it reads, and the program sees its own figures.
  CHECK(r.out == "allocated 37748736 reserved 58720256; reports 11 allocs 5 frees\n");
  const std::string trace = only_trace(dir);
  const json rep = report(trace);
  const json& b = rep.at("blocks");
  CHECK(b.at("recorded") == true);
  CHECK(b.at("allocator") == "PyTorch");
  CHECK(b.at("version") == "2.11.0+sim");  // sim/torch/version.py, read beside libc10.so
  CHECK(b.at("not_visible") == json::array());
  REQUIRE(b.at("devices").size() == 1);
  const json& d = b.at("devices").at(0);
  CHECK(d.at("allocations") == 11);
  CHECK(d.at("frees") == 5);
  CHECK(d.at("peak_allocated").at("bytes") == 44 * MiB);
  CHECK(d.at("peak_allocated").at("reserved") == 56 * MiB);
  CHECK(d.at("peak_reserved").at("bytes") == 56 * MiB);
  CHECK(d.at("end").at("allocated") == 36 * MiB);
  CHECK(d.at("end").at("count") == 6);
  CHECK(d.at("end").at("free_in_cache") == 20 * MiB);
  // Inside the segments (A 16 MiB: the weights; B 20 MiB from step 0; C 20 MiB from step 3).
  // Each step's activation takes the lowest 8 MiB free block, the kept tensor the smallest
  // that fits: B holds act [0,8) and kept 0-2 at [8,20); C holds kept 3 at [0,4), kept 4 at
  // [4,8). The peak of allocated (step 4, before its activation is freed): only C's [8,20)
  // is free. The peak of reserved (C taken in step 3, kept 3 in it): C's [4,20). At the end
  // the activation's B[0,8) is free too: 20 MiB in 2 blocks, gap ratio 20/56.
  const json& in = d.at("inside");
  CHECK(in.at("at_peak_allocated").at("free") == 12 * MiB);
  CHECK(in.at("at_peak_allocated").at("largest_free") == 12 * MiB);
  CHECK(in.at("at_peak_allocated").at("free_blocks") == 1);
  CHECK(in.at("at_peak_reserved").at("free") == 16 * MiB);
  CHECK(in.at("at_peak_reserved").at("free_blocks") == 1);
  CHECK(in.at("at_end").at("segments") == 3);
  CHECK(in.at("at_end").at("segment_bytes") == 56 * MiB);
  CHECK(in.at("at_end").at("block_bytes") == 36 * MiB);
  CHECK(in.at("at_end").at("free") == 20 * MiB);
  CHECK(in.at("at_end").at("free_blocks") == 2);
  CHECK(in.at("at_end").at("largest_free") == 12 * MiB);
  CHECK(in.at("at_end").at("gap_ratio").get<double>() == Approx(20.0 / 56.0));
  CHECK(in.at("at_end").at("external_fragmentation").get<double>() == Approx(1.0 - 12.0 / 20.0));
  // The timeline: one moment per stretch of time that had records, each the allocator's own
  // figures; its highest allocated is the peak's.
  const json& tl = d.at("timeline");
  REQUIRE(!tl.at("time_ns").empty());
  CHECK(tl.at("time_ns").size() == tl.at("allocated").size());
  CHECK(tl.at("time_ns").size() <= 11 + 5 + 3);  // at most one moment per record (3 segments taken)
  uint64_t top = 0;
  for (const json& a : tl.at("allocated")) top = std::max(top, a.get<uint64_t>());
  CHECK(top == 44 * MiB);
  CHECK(tl.at("reserved").back() == 56 * MiB);
  // No segment is given back: reserved never falls, at a segment's record (which carries no
  // allocator figure) either.
  for (size_t i = 1; i < tl.at("reserved").size(); ++i) CHECK(tl.at("reserved")[i] >= tl.at("reserved")[i - 1]);
  const json& sites = d.at("sites");
  REQUIRE(sites.size() == 3);
  CHECK(sites.at(0).at("class") == "leak");
  CHECK(sites.at(0).at("growth_per_iteration") == 4 * MiB);
  CHECK(sites.at(0).at("bytes_at_boundaries") == json::array({0, 4 * MiB, 8 * MiB, 12 * MiB, 16 * MiB, 20 * MiB}));
  CHECK(sites.at(0).at("frames").at(0).at("function").get<std::string>().starts_with("keep_history"));
  CHECK(sites.at(0).at("peak_bytes") == 20 * MiB);  // step 4's kept tensor came before the peak
  CHECK(sites.at(1).at("class") == "one-time");     // the weights
  CHECK(sites.at(1).at("end_bytes") == 16 * MiB);
  CHECK(sites.at(2).at("class") == "transient");  // the activations
  CHECK(sites.at(2).at("peak_bytes") == 8 * MiB);
  CHECK(sites.at(2).at("allocations") == 5);

  // The leak is growth's, where every gate reads it: the segments alone grow twice and stop.
  const json& g = rep.at("growth").at("sites").at(0);
  CHECK(g.at("class") == "leak");
  CHECK(g.at("inside") == "PyTorch");
  CHECK(g.at("growth_per_iteration") == 4 * MiB);
  const Result check = run({cli(), "check", trace, "--max-growth", "1MiB"});
  CHECK(check.exit_code == 1);
  CHECK(has(check.out, "4.00 MiB"));
  // memory_viz's view: each segment with its blocks, the bytes between them inactive; each
  // block an alloc (then free_requested, free_completed) in the device trace.
  const std::string pickle = dir.path + "/snap.pickle";
  REQUIRE(run({cli(), "export", "--format", "memviz", trace, "-o", pickle}).exit_code == 0);
  const Result seen =
      run({"/usr/bin/python3", "-c",
           "import pickle,sys\n"
           "d=pickle.load(open(sys.argv[1],'rb'))\n"
           "for s in d['segments']: print(s['total_size']>>20, s['allocated_size']>>20, "
           "' '.join(b['state'][0]+str(b['size']>>20) for b in s['blocks']))\n"
           "acts=[e['action'] for e in d['device_traces'][0]]\n"
           "print(*[acts.count(a) for a in ('segment_alloc','alloc','free_requested','free_completed')])",
           pickle});
  CHECK(seen.out == "16 16 a16\n20 12 i8 a4 a4 a4\n20 8 a4 a4 i12\n3 11 5 5\n");
  const Result text = run({cli(), "report", trace});
  CHECK(has(text.out, "leak: tensors inside PyTorch's cache from torch_blocks (keep_history"));
  CHECK(has(text.out, "inside PyTorch's cache on device 0: peak allocated 44.00 MiB (46,137,344 B)"));
}

TEST_CASE("blocks: with no marks, the loop is found from the blocks and the tensor kept per step is a leak") {
  TempDir dir;
  const Result r = traced(dir, {here("torch_blocks"), "unmarked"}, one_gib_device());
  REQUIRE(r.exit_code == 0);
  const json rep = report(only_trace(dir));
  const json& g = rep.at("growth");
  CHECK(g.at("found_by") == "call-site");
  CHECK(g.at("iterations") == 5);
  CHECK(g.at("partial_left_out") == false);
  CHECK(g.at("loop").at("inside") == "PyTorch");
  CHECK(g.at("loop").at("stretches") == 4);  // between the five activations
  CHECK(g.at("loop").at("agreeing") == 4);
  bool at_activation = false;  // the recurring stack: the activation's, below the allocator's frame
  for (const json& f : g.at("loop").at("frames"))
    at_activation |= f.at("function").get<std::string>().starts_with("activation");
  CHECK(at_activation);
  const json& sites = rep.at("blocks").at("devices").at(0).at("sites");
  REQUIRE(sites.size() == 3);
  CHECK(sites.at(0).at("class") == "leak");
  CHECK(sites.at(0).at("growth_per_iteration") == 4 * MiB);
  CHECK(sites.at(0).at("bytes_at_boundaries") == json::array({0, 4 * MiB, 8 * MiB, 12 * MiB, 16 * MiB, 20 * MiB}));
  CHECK(sites.at(1).at("class") == "one-time");   // the weights, before the first boundary
  CHECK(sites.at(2).at("class") == "transient");  // each activation freed within its step
  CHECK(sites.at(2).at("bytes_at_boundaries") == json::array({0, 0, 0, 0, 0, 0}));
  const Result text = run({cli(), "report", only_trace(dir)});
  CHECK(has(text.out,
            "5 iterations found: one allocation per iteration from the stack below, a block inside "
            "PyTorch's cache; 4 of 4 stretches"));
}

TEST_CASE("blocks: without block records the cache's inside is said not visible, never 'none'") {
  TempDir dir;
  REQUIRE(traced(dir, {here("torch_blocks"), "loop"}, one_gib_device({{"CUMEMTRACE_BLOCKS", "0"}})).exit_code == 0);
  const std::string trace = only_trace(dir);
  const json rep = report(trace);
  CHECK(rep.at("blocks").at("recorded") == false);
  CHECK(rep.at("blocks").at("not_visible") == json::array({"PyTorch"}));
  CHECK(rep.at("blocks").at("notes") ==
        json::array({"inside PyTorch's cache: not visible (no block records in this trace)"}));
  const Result text = run({cli(), "report", trace});
  CHECK(has(text.out, "  inside PyTorch's cache: not visible (no block records in this trace)\n"));
  const Result check = run({cli(), "check", trace, "--max-growth", "1MiB"});
  CHECK(check.exit_code == 0);                                   // what it could measure holds ...
  CHECK(has(check.out, "inside PyTorch's cache: not visible"));  // ... and it says what it could not
}

TEST_CASE("blocks: reports that do not lie in the driver's memory turn block records off, tracing goes on") {
  TempDir dir;
  const Result r = traced(dir, {here("torch_blocks"), "loop"}, one_gib_device({{"SIMTORCH_BAD_REPORTS", "1"}}));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "allocated 37748736 reserved 58720256; reports 11 allocs 5 frees\n");
  CHECK(has(r.err, "block events off: a block of 16777216 B at 0x"));
  const json rep = report(only_trace(dir));
  const json& b = rep.at("blocks");
  CHECK(b.at("recorded") == true);
  CHECK(b.at("devices") == json::array());  // the first block failed the check: none recorded
  CHECK(b.at("off").at("reason").get<std::string>().find("lies in no device memory the driver gave") !=
        std::string::npos);
  CHECK(b.at("not_visible") == json::array({"PyTorch"}));
  CHECK(device(rep, 0).at("peak").at("device_bytes") == 56 * MiB);  // the segments are traced as ever
}

TEST_CASE("blocks: a block in a segment the driver took back is refused, though the segment's last block checked out") {
  TempDir dir;
  const Result r = traced(dir, {here("torch_blocks"), "stale"}, one_gib_device());
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "stale: the third tensor at a+8388608\n");
  // The first two blocks check out; after the cudaFree the third, 8 MiB into the freed
  // segment, lies in nothing the driver gave: a check that kept an answer across the
  // driver's events would pass it.
  CHECK(has(r.err, "block events off: a block of 4194304 B at 0x"));
  const json rep = report(only_trace(dir));
  const json& b = rep.at("blocks");
  CHECK(b.at("off").at("reason").get<std::string>().find("lies in no device memory the driver gave") !=
        std::string::npos);
  REQUIRE(b.at("devices").size() == 1);
  CHECK(b.at("devices").at(0).at("peak_allocated").at("bytes") == 8 * MiB);  // the two blocks recorded
}

TEST_CASE("blocks: the allocator's own out-of-memory errors, each with its cause from the blocks") {
  SECTION("a memory fraction: the allocator refuses, no driver call fails") {
    TempDir dir;
    const Result r = traced(dir, {here("torch_blocks"), "limit"}, one_gib_device());
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "limit: out of memory, 1 reported\n");
    const json rep = report(only_trace(dir));
    const json& o = rep.at("blocks").at("out_of_memory").at(0);
    CHECK(o.at("cause") == "allocator-limit");
    CHECK(o.at("request") == 300 * MiB);
    CHECK(o.at("driver_refused") == false);
    REQUIRE(rep.at("failed_allocations").size() == 1);
    CHECK(rep.at("failed_allocations").at(0).at("diagnosis").at("cause") == "allocator-limit");
  }
  SECTION("live tensors fill the device: demand") {
    TempDir dir;
    const Result r = traced(dir, {here("torch_blocks"), "demand"}, one_gib_device());
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "demand: 5 tensors\n");
    const json rep = report(only_trace(dir));
    const json& o = rep.at("blocks").at("out_of_memory").at(0);
    CHECK(o.at("cause") == "demand");
    CHECK(o.at("request") == 200 * MiB);
    CHECK(o.at("allocated") == 1000 * MiB);
    CHECK(o.at("reserved") == 1000 * MiB);
    CHECK(o.at("driver_refused") == true);
    // The driver's refusals of the allocator's segment (asked twice: before and after it gave
    // its free segments back, from two lines of the allocator) are the same failure: one
    // call site by the call-site rule, past the allocator's frames, so one row of two.
    REQUIRE(rep.at("failed_allocations").size() == 1);
    CHECK(rep.at("failed_allocations").at(0).at("count") == 2);
    CHECK(rep.at("failed_allocations").at(0).at("diagnosis").at("cause") == "demand");
  }
  SECTION("another process holds what the tensors would need: the driver's split, cache split by the blocks") {
    TempDir dir;
    // 1 GiB, 600 MiB of it another process's: 424 MiB for this one, two 200 MiB tensors.
    const Result r = traced(dir, {here("torch_blocks"), "crowded"},
                            one_gib_device({{"SIMCUDA_OTHER_PROCESS_BYTES", std::to_string(600 * MiB)}}));
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "crowded: 2 tensors\n");
    const json rep = report(only_trace(dir));
    // Inside the cache the tensors hold it all: the blocks alone say demand.
    CHECK(rep.at("blocks").at("out_of_memory").at(0).at("cause") == "demand");
    REQUIRE(rep.at("failed_allocations").size() == 1);
    const json& d = rep.at("failed_allocations").at(0).at("diagnosis");
    // 24 MiB free, 176 MiB missing: the other process's 600 MiB or the two segments of live
    // tensors (400 MiB, split by blocks in use, so never the cache's to give back) would
    // each make it fit; the other process ranks first, as it does with no blocks.
    CHECK(d.at("cause") == "other-processes");
    const json& fits = d.at("would_have_fit");
    REQUIRE(fits.size() == 2);
    CHECK(fits.at(0).at("holders") == json::array({"other_processes"}));
    CHECK(fits.at(1).at("holders") == json::array({"cache_in_use:PyTorch"}));
    CHECK(fits.at(1).at("released") == 400 * MiB);
  }
  SECTION("free bytes in the cache, split by live tensors: fragmented-cache") {
    TempDir dir;
    const Result r = traced(dir, {here("torch_blocks"), "fragmented"}, one_gib_device());
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "fragmented: out of memory, allocated 1006632960 reserved 1048576000\n");
    const json rep = report(only_trace(dir));
    const json& o = rep.at("blocks").at("out_of_memory").at(0);
    CHECK(o.at("cause") == "fragmented-cache");
    CHECK(o.at("request") == 30 * MiB);
    CHECK(o.at("allocated") == 960 * MiB);
    CHECK(o.at("reserved") == 1000 * MiB);
    // The 100 MiB segment's 2nd and 4th 20 MiB blocks are free; the 900 MiB one is full.
    CHECK(o.at("inside").at("segments") == 2);
    CHECK(o.at("inside").at("free") == 40 * MiB);
    CHECK(o.at("inside").at("free_blocks") == 2);
    CHECK(o.at("inside").at("largest_free") == 20 * MiB);
    CHECK(o.at("summary").get<std::string>().ends_with("the largest free block was 20.00 MiB (2 free blocks)"));
    REQUIRE(rep.at("failed_allocations").size() == 1);  // asked twice, one call site (above)
    CHECK(rep.at("failed_allocations").at(0).at("count") == 2);
    CHECK(rep.at("failed_allocations").at(0).at("diagnosis").at("cause") == "fragmented-cache");
  }
}
