// Beside other tools (issue 29, item 8): a second preload that intercepts cudaMalloc, in
// both LD_PRELOAD orders, forwarding or serving it from the driver's VMM API as a memory
// saver does (a profiler's NVTX injection: marks_test.cpp). Figures from coexist.c: 1, 3
// and 5 MiB allocated, the 3 MiB one freed. Both passed before issue 29's changes too:
// every allocation is counted at the driver, whoever serves cudaMalloc.
#include <catch2/catch.hpp>

#include "harness.h"
#include "sizes.h"

using namespace harness;

namespace {

// coexist run with the other preload in `mode`, before or after ours; its report.
nlohmann::json with_other(const std::string& mode, bool other_first, Result& t) {
  TempDir dir;
  const std::string other = here("libother_preload.so");
  const std::string preload = other_first ? other + ":" + preload_library() : preload_library() + ":" + other;
  t = traced(dir, {here("coexist")}, {{"LD_PRELOAD", preload}, {"OTHER_PRELOAD", mode}});
  REQUIRE(t.exit_code == 0);
  return report(only_trace(dir));
}

}  // namespace

TEST_CASE("another preload that forwards cudaMalloc, before or after ours: every allocation counted once") {
  for (const bool other_first : {true, false}) {
    INFO("other preload first: " << other_first);
    Result t;
    const auto r = with_other("forward", other_first, t);
    CHECK(t.err.find("other preload: 3 cudaMalloc\n") != std::string::npos);  // it ran
    const auto& d = device(r, 0);
    CHECK(d.at("counts").at("allocs") == 3);
    CHECK(d.at("counts").at("frees") == 1);
    CHECK(d.at("counts_by_api").at("cudaMalloc").at("allocs") == 3);
    CHECK(d.at("peak").at("device_bytes") == 9 * MiB);
    CHECK(d.at("end").at("device_bytes") == 6 * MiB);
    CHECK(r.at("integrity").at("figures_complete") == true);
  }
}

TEST_CASE(
    "another preload that serves cudaMalloc from the VMM API, before or after ours: the driver's memory, counted "
    "once") {
  for (const bool other_first : {true, false}) {
    INFO("other preload first: " << other_first);
    Result t;
    const auto r = with_other("vmm", other_first, t);
    CHECK(t.err.find("other preload: 3 cudaMalloc\n") != std::string::npos);
    const auto& d = device(r, 0);
    // Physical memory in 2 MiB granules: 1, 3 and 5 MiB take 2, 4 and 6 MiB; the 4 MiB is released.
    CHECK(d.at("counts").at("allocs") == 3);
    CHECK(d.at("counts").at("frees") == 1);
    CHECK(d.at("counts").at("maps") == 3);
    CHECK(d.at("counts").at("unmaps") == 1);
    CHECK(d.at("peak").at("device_bytes") == 12 * MiB);
    CHECK(d.at("end").at("device_bytes") == 8 * MiB);
    CHECK(r.at("integrity").at("figures_complete") == true);
    // What we could see: with ours first, the program's cudaMalloc, under which the VMM
    // calls came; with the other first, only the VMM calls it made.
    const char* api = other_first ? "cuMemCreate" : "cudaMalloc";
    CHECK(d.at("counts_by_api").at(api).at("allocs") == 3);
    CHECK(d.at("counts_by_api").size() == 2);
  }
}
