// Context teardowns free what the context held (teardown.c; trace format 1.8's
// kEventTeardown): nothing made before a cudaDeviceReset is reported leaked, and a free
// refused after it stays in the trace as a failed free.
#include <catch2/catch.hpp>

#include "harness.h"
#include "sizes.h"

using namespace harness;

namespace {

struct TeardownRun : TracedProgram {
  explicit TeardownRun(const std::string& mode) : TracedProgram("teardown", mode) {}
};

}  // namespace

TEST_CASE("teardown: cudaDeviceReset frees the 15 allocations made before it, and the cudaFree after it fails") {
  TeardownRun t("reset");
  CHECK(t.result.out == "free after reset: cudaErrorInvalidValue\n");
  const auto j = report(t.trace);
  CHECK(j.at("leaks").empty());
  const auto& d = device(j, 0);
  CHECK(d.at("end").at("device_bytes") == 0);
  CHECK(d.at("peak").at("device_bytes") == 65 * MiB + 7536);
  CHECK(d.at("counts").at("allocs") == 15);
  CHECK(d.at("counts").at("frees") == 15);
  CHECK(d.at("counts_by_api").at("cudaDeviceReset").at("frees") == 15);
  CHECK(d.at("counts_by_api").count("cudaFree") == 0);
  // The cudaFree of memory the reset took: an unknown address (so no device), its free
  // taken back as failed.
  const auto& none = device(j, -1);
  CHECK(none.at("counts").at("unknown_frees") == 1);
  CHECK(none.at("counts_by_api").at("cudaFree").at("frees") == 0);
  CHECK(d.at("exit_snapshot").at("device_bytes") == 0);
  // 15 teardown frees (flags 32); the refused free recorded with CUDA_ERROR_INVALID_VALUE
  // (1), flagged unknown address + restored (5).
  CHECK(t.events(R"(event t=\d+ free \S+ dev=0 [^\n]* result=0 flags=32 )") == 15);
  CHECK(t.events(R"(event t=\d+ free unknown [^\n]* result=1 flags=5 )") == 1);
}

TEST_CASE("teardown: cuCtxDestroy frees its own context's allocation, not the primary context's") {
  TeardownRun t("destroy");
  const auto j = report(t.trace);
  const auto& d = device(j, 0);
  CHECK(d.at("end").at("device_bytes") == 2 * MiB);
  CHECK(d.at("counts").at("frees") == 1);
  CHECK(d.at("counts_by_api").at("cuCtxDestroy_v2").at("frees") == 1);
  REQUIRE(j.at("leaks").size() == 1);
  CHECK(j.at("leaks")[0].at("bytes") == 2 * MiB);
}

TEST_CASE("teardown: only the last cuDevicePrimaryCtxRelease frees the primary context's memory") {
  TeardownRun t("release");
  const auto j = report(t.trace);
  const auto& d = device(j, 0);
  CHECK(d.at("end").at("device_bytes") == 0);
  CHECK(d.at("counts").at("frees") == 1);
  CHECK(t.events(R"(event t=\d+ free device dev=0 [^\n]* size=3145728 [^\n]* result=0 flags=32 )") == 1);
  CHECK(j.at("leaks").empty());
}

TEST_CASE("teardown: the 7.0 ABI of reset and release, as the static runtime finds them, free the context's memory") {
  // cuGetProcAddress at version 7000 hands out cuDevicePrimaryCtxReset, not its _v2.
  TeardownRun reset("old-reset");
  REQUIRE(reset.result.exit_code == 0);
  const auto r = report(reset.trace);
  CHECK(r.at("leaks").empty());
  CHECK(device(r, 0).at("end").at("device_bytes") == 0);
  CHECK(device(r, 0).at("counts_by_api").at("cuDevicePrimaryCtxReset").at("frees") == 1);
  CHECK(reset.events(R"(event t=\d+ free device dev=0 [^\n]* size=4194304 [^\n]* result=0 flags=32 )") == 1);
  // dlsym of the exported 7.0 name: the last release.
  TeardownRun release("old-release");
  REQUIRE(release.result.exit_code == 0);
  const auto l = report(release.trace);
  CHECK(l.at("leaks").empty());
  CHECK(device(l, 0).at("counts_by_api").at("cuDevicePrimaryCtxRelease").at("frees") == 1);
  CHECK(release.events(R"(event t=\d+ free device dev=0 [^\n]* size=3145728 [^\n]* result=0 flags=32 )") == 1);
}
