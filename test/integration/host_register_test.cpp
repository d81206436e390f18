// cudaHostRegister/cudaHostUnregister (and the driver's cuMemHostRegister_v2 and
// cuMemHostUnregister under them) are host-pinned memory on the host row, counted once.
// Figures from host_register.c: 3 MiB + 1 MiB registered, 1 MiB unregistered, a failed
// registration and a failed unregistration, 3 MiB left registered.
#include <catch2/catch.hpp>

#include "harness.h"

using namespace harness;

TEST_CASE("registered host memory is host-pinned bytes, counted once, and failed calls take none") {
  TempDir dir;
  const Result r = traced(dir, {here("host_register")});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "registered 3 MiB left\n");
  const auto j = report(only_trace(dir));
  const auto& host = device(j, -1);
  CHECK(host.at("peak_pinned").at("bytes") == 4194304);
  CHECK(host.at("end").at("live_bytes").at("host-pinned") == 3145728);
  CHECK(host.at("counts").at("allocs") == 2);
  CHECK(host.at("counts").at("frees") == 1);
  CHECK(host.at("counts").at("failed") == 0);
  CHECK(j.at("failed_allocations_total") == 0);
  const auto& by_api = host.at("counts_by_api");
  CHECK(by_api.at("cudaHostRegister").at("allocs") == 2);
  CHECK(by_api.at("cudaHostUnregister").at("frees") == 1);  // the failed call is not a free (report-json.md)
  CHECK(host.at("counts").at("unknown_frees") == 1);        // ... but is a free of unknown memory
  uint64_t leaked = 0;
  for (const auto& leak : j.at("leaks")) leaked += leak.at("bytes").get<uint64_t>();
  CHECK(leaked == 3145728);
}
