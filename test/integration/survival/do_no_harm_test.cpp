// The first promise, under the two things that broke it: a CUDA graph capture (a driver
// call of the tracer's own during one invalidates it) and a vfork child (it runs in the
// parent's memory, so what an exec hook does there it does to the parent's trace). Each
// scenario runs traced and untraced and must print the same; the traced one's trace must
// be complete and exact.
#include <catch2/catch.hpp>

#include "harness.h"
#include "sizes.h"

using namespace harness;

TEST_CASE("a global stream capture over many snapshot periods ends well under the tracer") {
  const Env fast{{"CUMEMTRACE_SNAPSHOT_MS", "10"}, {"CUMEMTRACE_FLUSH_MS", "10"}};
  const Result plain = run({here("capture_global")});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out == "graph allocs 0 0 0, end capture 0 (cudaSuccess), after 0 0, prohibited calls 0\n");

  TempDir dir;
  const Result t = traced(dir, {here("capture_global")}, fast);
  CHECK(t.out == plain.out);  // the sim counted no prohibited call and the capture ended well
  CHECK(t.exit_code == 0);
  const auto r = report(only_trace(dir));
  CHECK(r.at("trace").at("complete") == true);
  const auto& d = device(r, 0);
  // The 64 MiB cudaMalloc is the peak; the two graph nodes (1 MiB, 3 MiB) hold no memory.
  CHECK(d.at("peak").at("device_bytes") == 64 * MiB);
  CHECK(d.at("counts").at("allocs") == 1);
  CHECK(d.at("counts").at("frees") == 1);
  CHECK(d.at("counts").at("unknown_frees") == 0);
  CHECK(d.at("counts").at("graph_allocs") == 2);
  CHECK(d.at("end").at("device_bytes") == 0);
}

TEST_CASE("vfork, posix_spawn and clone(CLONE_VM) children leave the parent's trace whole") {
  for (const char* how : {"vfork", "posix_spawn", "clone"}) {
    INFO(how);
    const Result plain = run({here("vfork_mid"), how});
    REQUIRE(plain.exit_code == 0);
    TempDir dir;
    const Result t = traced(dir, {here("vfork_mid"), how});
    CHECK(t.out == plain.out);
    CHECK(t.exit_code == 0);
    const auto r = report(only_trace(dir));
    CHECK(r.at("trace").at("complete") == true);
    CHECK(r.at("trace").at("events") == 8);  // 6 allocations, 1 free, the primary context
    const auto& d = device(r, 0);
    CHECK(d.at("counts").at("allocs") == 6);
    CHECK(d.at("counts").at("frees") == 1);
    CHECK(d.at("end").at("device_bytes") == 10 * MiB);
    CHECK(d.at("peak").at("device_bytes") == 11 * MiB);
  }
}

TEST_CASE("Python's subprocess.run in the middle of a traced program leaves its trace whole") {
  const std::string script = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/subprocess_mid.py";
  const std::string runtime = std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13";
  const Result plain = run({"/usr/bin/python3", script, runtime});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.out == "subprocess: child exited 0, 6 allocations, 1 free\n");
  TempDir dir;
  const Result t = traced(dir, {"/usr/bin/python3", script, runtime});
  CHECK(t.out == plain.out);
  CHECK(t.exit_code == 0);
  const auto r = report(only_trace(dir));
  CHECK(r.at("trace").at("complete") == true);
  const auto& d = device(r, 0);
  CHECK(d.at("counts").at("allocs") == 6);
  CHECK(d.at("counts").at("frees") == 1);
  CHECK(d.at("end").at("device_bytes") == 10 * MiB);
}
