// VMM sharing (shareable_import.c): imports of a POSIX-fd handle through every lookup
// path are another process's memory, listed and never counted. By hand:
//   this device's bytes: W 1 MiB + P 4 MiB = 5,242,880 at the peak, 0 at the end;
//   an import's bytes come with its first mapping (4 MiB each): I1 and I3 mapped together
//   make 8,388,608 imported at most; I2, never mapped, adds none; I3 stays: 4,194,304.
//   The refused fabric-handle probe is one failed allocation, not an out-of-memory.
#include <catch2/catch.hpp>

#include "harness.h"

using namespace harness;

TEST_CASE("an imported VMM handle is another process's memory: listed with its mapped bytes, never counted") {
  TempDir dir;
  const Result r = traced(dir, {here("shareable_import")});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "imports done\n");
  const auto j = report(only_trace(dir));
  const auto& d = device(j, 0);
  CHECK(d.at("peak").at("device_bytes") == 5242880);
  CHECK(d.at("end").at("device_bytes") == 0);
  CHECK(d.at("end").at("live_bytes").at("ipc-import") == 4194304);
  CHECK(d.at("end").at("live_count").at("ipc-import") == 1);
  // I3's mapping shows another process's memory: no mapped bytes, no footprint here.
  CHECK(d.at("end").at("live_bytes").value("vmm-map", uint64_t(0)) == 0);  // absent when 0
  CHECK(d.at("end").at("fragmentation").at("live_bytes") == 0);

  const auto& imports = d.at("imports");
  CHECK(imports.at("count") == 3);
  CHECK(imports.at("peak_bytes") == 8388608);
  CHECK(imports.at("live_bytes_end") == 4194304);
  CHECK(imports.at("live_count_end") == 1);
  CHECK(imports.at("exporter_pids").empty());

  const auto& counts = d.at("counts");
  CHECK(counts.at("shares") == 1);
  CHECK(counts.at("allocs") == 5);  // W, P, I1, I2, I3
  CHECK(counts.at("frees") == 4);   // W, P, I1, I2
  CHECK(counts.at("unknown_frees") == 0);
  CHECK(counts.at("failed") == 1);  // F, the fabric handle
  CHECK(counts.at("maps") == 2);
  CHECK(counts.at("unmaps") == 1);
  CHECK(d.at("counts_by_api").at("cuMemImportFromShareableHandle").at("allocs") == 3);
  CHECK(d.at("counts_by_api").at("cuMemRelease").at("frees") == 3);
  CHECK(d.at("counts_by_api").at("cuMemCreate").at("failed") == 1);
  REQUIRE(j.at("failed_allocations").size() == 1);
  CHECK(j.at("failed_allocations").at(0).at("diagnosis").at("cause") == "refused");

  // The library's own figures at exit agree.
  const auto& x = d.at("exit_snapshot");
  CHECK(x.at("device_bytes") == 0);
  CHECK(x.at("peak_device_bytes") == 5242880);
  CHECK(x.at("live_bytes").at("ipc-import") == 4194304);

  uint64_t import_leak = 0, device_leak = 0;
  for (const auto& leak : j.at("leaks")) {
    if (leak.at("kind") == "ipc-import") import_leak += leak.at("bytes").get<uint64_t>();
    if (leak.at("kind") == "device" || leak.at("kind") == "vmm-physical")
      device_leak += leak.at("bytes").get<uint64_t>();
  }
  CHECK(import_leak == 4194304);
  CHECK(device_leak == 0);
}

TEST_CASE("a refused allocation that is no out-of-memory gets no post-mortem from `run`") {
  TempDir dir;
  const Result r = run({cli(), "run", "-o", dir.path + "/t-%p.trace", "--", here("shareable_import")});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "imports done\n");
  CHECK(dir.files("t-").size() == 1);  // the trace, no .oom.txt beside it
  CHECK(r.err.find("an allocation failed") == std::string::npos);
}
