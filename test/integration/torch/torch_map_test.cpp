// PyTorch's block map at an out-of-memory error (include/cumemtrace/api.h, trace record
// AllocatorSegments, analysis/reports/oom/allocator_map.h), on the simulated driver, without PyTorch:
// a C program calling the API as the observer would, the Python package against a fake
// torch, the package without the tracer, and `cumemtrace run --torch-oom`.
#include <catch2/catch.hpp>

#include <fstream>

#include "harness.h"
#include "sizes.h"

using namespace harness;

namespace {

const std::string kPythonDir = std::string(CUMEMTRACE_SOURCE_DIR) + "/python";
const std::string kTorchOomScript = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/torch_oom.py";
const std::string kRuntime = std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13";
const Env k16GiB = {{"SIMCUDA_CAPACITY", std::to_string(16 * GiB)}};

}  // namespace

TEST_CASE("a block map given after an OOM: exact bytes inside the cached segments, and no free block fits") {
  const std::string prog = std::string(CUMEMTRACE_TEST_LIBS_DIR) + "/allocator_map";
  const Result plain = run({prog}, k16GiB);
  CHECK(plain.exit_code == 0);
  CHECK(plain.out == "oom: cudaErrorMemoryAllocation; tracer absent\n");
  TempDir dir;
  const Result t = traced(dir, {prog}, k16GiB);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out == "oom: cudaErrorMemoryAllocation; map: 0; bad: -1\n");
  CHECK(t.err.find("a segment's blocks lie outside the block array") != std::string::npos);

  const std::string trace = only_trace(dir);
  const auto r = report(trace);
  REQUIRE(r.at("failed_allocations").size() == 1);
  const auto& f = r.at("failed_allocations").at(0);
  // The map says the 9 GiB segment is split by blocks in use: its 1.5 GiB of free blocks are
  // less than the 9 GiB asked for, and the rest is live tensors, so the program's own
  // tensors need the memory (demand), and the advice never offers empty_cache() (it cannot
  // release such a segment).
  CHECK(f.at("diagnosis").at("cause") == "demand");
  CHECK(f.at("diagnosis").at("figures").at("cache_in_use:PyTorch") == 9 * GiB);
  const auto& advice = f.at("diagnosis").at("advice");
  REQUIRE(advice.size() == 1);
  CHECK(advice.at(0).get<std::string>().starts_with(
      "PyTorch's block map shows 1 segment split by blocks in use: emptying the cache cannot release them"));
  const auto& m = f.at("allocator_map");
  REQUIRE(m.is_object());
  CHECK(m.at("allocator") == "pytorch");
  CHECK(m.at("request") == 9 * GiB);
  CHECK(m.at("segments") == 2);
  CHECK(m.at("segments_joined") == 1);
  CHECK(m.at("segments_unjoined") == 1);
  CHECK(m.at("total_bytes") == 9 * GiB + 2 * MiB);
  CHECK(m.at("allocated_bytes") == 29 * 256 * MiB);
  CHECK(m.at("allocated_blocks") == 29);
  CHECK(m.at("pending_free_bytes") == 256 * MiB);
  CHECK(m.at("pending_free_blocks") == 1);
  CHECK(m.at("free_bytes") == 6 * 256 * MiB + 2 * MiB);
  CHECK(m.at("free_blocks") == 7);
  CHECK(m.at("largest_free_block") == 256 * MiB);
  CHECK(m.at("free_block_fits") == false);
  const auto& segs = m.at("largest_segments");
  REQUIRE(segs.size() == 2);
  CHECK(segs.at(0).at("total_bytes") == 9 * GiB);
  CHECK(segs.at(0).at("blocks") == 36);
  CHECK(segs.at(0).at("free_bytes") == 6 * 256 * MiB);
  CHECK(segs.at(0).at("segment_type") == "large");
  REQUIRE(segs.at(0).at("allocation").is_object());
  CHECK(segs.at(0).at("allocation").at("size") == 9 * GiB);
  CHECK(segs.at(0).at("allocation").at("kind") == "device");
  CHECK(segs.at(1).at("address") == 0x1000);
  CHECK(segs.at(1).at("segment_type") == "small");
  CHECK(segs.at(1).at("allocation").is_null());

  const Result text = run({cli(), "report", trace});
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("PyTorch's block map at the failure: 2 cached segments (9.00 GiB (9,665,773,568 B)), "
                      "1 joined to a traced allocation, 1 not") != std::string::npos);
  CHECK(text.out.find("largest free block: 256.00 MiB (268,435,456 B); no free block is as large as the "
                      "request (9663676416 B)") != std::string::npos);
}

TEST_CASE("cumemtrace.torch with a fake torch: the observer records the failing device's map") {
  TempDir dir;
  const Result t = traced(dir, {"/usr/bin/python3", kTorchOomScript, kRuntime, kPythonDir}, k16GiB);
  INFO(t.err);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out == "installed: True; observers: 1; failed: 2; recorded: 1\n");
  const auto r = report(only_trace(dir));
  REQUIRE(r.at("failed_allocations").size() == 1);
  const auto& f = r.at("failed_allocations").at(0);
  // 8 GiB asked; the one segment holds 5 GiB of live tensors, 512 MiB pending and 2.5 GiB
  // free: releasing it means freeing tensors, so demand.
  CHECK(f.at("diagnosis").at("cause") == "demand");
  const auto& m = f.at("allocator_map");
  REQUIRE(m.is_object());
  CHECK(m.at("segments") == 1);  // device 1's segment left out
  CHECK(m.at("segments_joined") == 1);
  CHECK(m.at("total_bytes") == 8 * GiB);
  CHECK(m.at("allocated_bytes") == 5 * GiB);
  CHECK(m.at("pending_free_bytes") == 512 * MiB);
  CHECK(m.at("free_bytes") == 2 * GiB + 512 * MiB);
  CHECK(m.at("free_blocks") == 2);
  CHECK(m.at("largest_free_block") == 1536 * MiB);
  CHECK(m.at("free_block_fits") == false);
  CHECK(m.at("largest_segments").at(0).at("allocation").at("size") == 8 * GiB);
}

TEST_CASE("without the tracer, cumemtrace.torch does nothing and raises nothing") {
  const Result plain = run({"/usr/bin/python3", kTorchOomScript, kRuntime, kPythonDir}, k16GiB);
  INFO(plain.err);
  CHECK(plain.exit_code == 0);
  CHECK(plain.out == "installed: False; observers: 0; failed: 2; recorded: 0\n");
  CHECK(plain.err.empty());
}

TEST_CASE("cumemtrace run --torch-oom: a sitecustomize on PYTHONPATH attaches the observer when torch is imported") {
  TempDir user;
  std::ofstream(user.path + "/sitecustomize.py") << "USER_SITECUSTOMIZE = True\n";
  const std::string script = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/torch_oom_site.py";
  const Result on = run({cli(), "run", "--torch-oom", "--", "/usr/bin/python3", script}, {{"PYTHONPATH", user.path}});
  INFO(on.err);
  CHECK(on.exit_code == 0);
  CHECK(on.out == "loaded at start: True; installed: True; observers: 1; user sitecustomize: True\n");
  const Result off = run({cli(), "run", "--", "/usr/bin/python3", script}, {{"PYTHONPATH", user.path}});
  CHECK(off.out == "loaded at start: False; installed: False; observers: 0; user sitecustomize: True\n");
}
