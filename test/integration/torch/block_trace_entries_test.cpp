// PyTorch's trace entries (interpose/hooks/torch_trace_entries.h): the tracer attaches its
// tracker to the stand-in allocator (sim/torch/trace_tracker.h: PyTorch 2.11's layout),
// records requested bytes, streams, pools and frees that wait on other streams, checks
// every segment against the driver, and refuses a layout it does not know.
// programs/torch_blocks.c's comment works out every figure.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness.h"
#include "sizes.h"

using namespace harness;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("trace entries: requested bytes, streams, pools and a free that waits on another stream") {
  TempDir dir;
  const Result r = traced(dir, {here("torch_blocks"), "streams"}, one_gib_device());
  REQUIRE(r.exit_code == 0);
  // B could not take A's block while A's free waited: it lies 8,000,000 B past A.
  CHECK(r.out == "streams: b at a+8000000, allocated 25165824 then 29360128, reserved 58720256\n");
  const std::string trace = only_trace(dir);
  // The weights' block came before the tracker was attached (at the first block reported):
  // usage report only. A: asked 8,000,000 B on stream 7; its free waits (flags 7); its
  // completion comes later with its requested bytes; G from pool {5, 0}.
  CHECK(dump_events(trace, "block-source .* state=on flags=1 ") == 1);
  CHECK(dump_events(trace, "block-source .* state=on flags=2 ") == 1);
  CHECK(dump_events(trace, "block-event .* op=1 .*size=16777216 .* flags=1 ") == 1);
  CHECK(dump_events(trace, "block-event .* op=1 .*size=8000000 .* flags=3 .*requested=8000000 stream=0x7 pool=0,0") ==
        1);
  CHECK(dump_events(trace, "block-event .* op=2 .*size=8000000 .* flags=7 .*requested=8000000 stream=0x7") == 1);
  CHECK(dump_events(trace, "block-event .* op=3 .* flags=2 requested=8000000 stream=0x7") == 1);
  CHECK(dump_events(trace, "block-event .* op=1 .*size=4194304 .* flags=3 .*requested=4194304 stream=0x0 pool=5,0") ==
        1);
  CHECK(dump_events(trace, "block-event .* op=4 .*size=20971520 .* flags=2 ") == 2);  // A's and G's segments

  const json rep = report(trace);
  const json& b = rep.at("blocks");
  CHECK(b.at("trace_entries") == true);
  CHECK(b.at("trace_entries_off").is_null());
  const json& end = b.at("devices").at(0).at("inside").at("at_end");
  // 16 + 20 + 20 MiB of segments hold W, B and G (28 MiB); free: A's 8,000,000 B, the
  // 4,582,912 B after B, and 16 MiB after G.
  CHECK(end.at("segments") == 3);
  CHECK(end.at("block_bytes") == 28 * MiB);
  CHECK(end.at("pending") == 0);
  CHECK(end.at("free") == 28 * MiB);
  CHECK(end.at("free_blocks") == 3);
  CHECK(end.at("largest_free") == 16 * MiB);

  // memory_viz: A's free is requested, B allocated, then A's free completes; sizes as asked.
  const std::string pickle = dir.path + "/snap.pickle";
  REQUIRE(run({cli(), "export", "--format", "memviz", trace, "-o", pickle}).exit_code == 0);
  const Result seen = run({"/usr/bin/python3", "-c",
                           "import pickle,sys\n"
                           "d=pickle.load(open(sys.argv[1],'rb'))\n"
                           "print(' '.join(e['action']+':'+str(e['size']) for e in d['device_traces'][0]))",
                           pickle});
  CHECK(seen.out ==
        "segment_alloc:16777216 alloc:16777216 segment_alloc:20971520 alloc:8000000 free_requested:8000000 "
        "alloc:8388608 free_completed:8000000 segment_alloc:20971520 alloc:4194304\n");
}

TEST_CASE("trace entries: an out-of-memory error while a free waits on another stream is pending-frees") {
  TempDir dir;
  const Result r = traced(dir, {here("torch_blocks"), "pending"}, one_gib_device());
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "pending: out of memory, then allocated at a+0\n");
  const json rep = report(only_trace(dir));
  const json& o = rep.at("blocks").at("out_of_memory").at(0);
  CHECK(o.at("request") == 500 * MiB);
  CHECK(o.at("cause") == "pending-frees");
  CHECK(o.at("inside").at("pending") == 600 * MiB);
  CHECK(o.at("inside").at("free") == 0);
  CHECK(o.at("inside").at("segments") == 1);
  for (const json& f : rep.at("failed_allocations")) CHECK(f.at("diagnosis").at("cause") == "pending-frees");
}

TEST_CASE("trace entries: a segment the driver never gave turns them off, the usage reports go on") {
  TempDir dir;
  const Result r = traced(dir, {here("torch_blocks"), "loop"}, one_gib_device({{"SIMTORCH_BAD_TRACE", "1"}}));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "allocated 37748736 reserved 58720256; reports 11 allocs 5 frees\n");
  CHECK(has(r.err, "PyTorch's trace entries off: a segment of 20971520 B at 0x"));
  const std::string trace = only_trace(dir);
  CHECK(dump_events(trace, "block-source .* state=off flags=2 .*reason=a segment of 20971520 B") == 1);
  CHECK(dump_events(trace, "block-event .* flags=[2367] ") == 0);  // no trace entry passed
  const json b = report(trace).at("blocks");
  CHECK(b.at("off").is_null());  // the blocks themselves still check out
  CHECK(b.at("trace_entries_off").get<std::string>().starts_with("a segment of 20971520 B at 0x"));
  CHECK(b.at("devices").at(0).at("allocations") == 11);
  CHECK(b.at("devices").at(0).at("peak_allocated").at("bytes") == 44 * MiB);
}

TEST_CASE("trace entries: a PyTorch version whose layout is not known is not read") {
  TempDir dir;
  // The stand-in's libraries beside a version file of a version no layout is known for.
  const fs::path lib = fs::path(dir.path) / "torch" / "lib";
  fs::create_directories(lib);
  const fs::path sim = fs::path(CUMEMTRACE_SIM_DIR) / "torch" / "lib";
  for (const char* name : {"libc10.so", "libc10_cuda.so"}) fs::copy_file(sim / name, lib / name);
  std::ofstream(fs::path(dir.path) / "torch" / "version.py") << "__version__ = '2.9.1+cu128'\n";
  const Result r = traced(dir, {here("torch_blocks"), "loop"},
                          one_gib_device({{"LD_LIBRARY_PATH", lib.string() + ":" + CUMEMTRACE_SIM_DIR}}));
  REQUIRE(r.exit_code == 0);
  const std::string trace = only_trace(dir);
  CHECK(dump_events(trace,
                    "block-source .* state=off flags=2 version=2.9.1\\+cu128 .*reason=PyTorch 2.9.1\\+cu128: "
                    "the layout of its trace entries is not one this tracer knows") == 1);
  const json b = report(trace).at("blocks");
  CHECK(b.at("version") == "2.9.1+cu128");
  CHECK(b.at("trace_entries") == false);
  CHECK(b.at("devices").at(0).at("allocations") == 11);
  const Result text = run({cli(), "report", trace});
  CHECK(has(text.out, "its trace entries were not read (PyTorch 2.9.1+cu128: the layout"));
}
