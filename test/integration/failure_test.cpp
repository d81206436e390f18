// What a user needs after an out-of-memory error, and what a killed job leaves behind.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>

#include "harness.h"

using namespace harness;

TEST_CASE("a failed allocation is reported with its size, stack, live bytes and free/total") {
  TempDir dir;
  const Env env{{"SIMCUDA_CAPACITY", "8589934592"}};
  const Result t = traced(dir, {program("prog_runtime"), "oom"}, env);
  REQUIRE(t.exit_code == 0);  // the program saw cudaErrorMemoryAllocation, as without us
  REQUIRE(t.out == run({program("prog_runtime"), "oom"}, env).out);
  const auto r = report(only_trace(dir));
  REQUIRE(r.at("failed_allocations").size() == 1);
  const auto& f = r.at("failed_allocations")[0];
  CHECK(f.at("size") == 8589934593);  // cudaMemGetInfo's total + 1
  CHECK(f.at("device") == 0);
  CHECK(f.at("api") == "cudaMalloc");
  CHECK(f.at("result_name") == "CUDA_ERROR_OUT_OF_MEMORY");
  CHECK(f.at("requested_live_device_bytes") == 0);
  // The context (512 MiB) is all the device holds at that moment.
  CHECK(f.at("device_total") == 8589934592);
  CHECK(f.at("device_free") == 8589934592 - 536870912);
  // A request above the device's total: no holder's release helps (before: `demand`, with
  // tracked_live_bytes 0 and advice to shrink call sites it did not list).
  CHECK(f.at("diagnosis").at("cause") == "exceeds-device");
  CHECK(f.at("diagnosis").at("figures") == nlohmann::json{{"request", 8589934593}, {"device_total", 8589934592}});
  bool in_scenario = false;
  for (const auto& frame : f.at("frames"))
    in_scenario |= frame.value("function", "").find("scenario_oom") != std::string::npos;
  CHECK(in_scenario);
  CHECK(device(r, 0).at("counts").at("failed") == 1);
}

TEST_CASE("a process killed with SIGKILL leaves a trace readable up to its last flush") {
  TempDir dir;
  // frag2 makes three 64 MiB blocks, frees the middle one, then holds for 10 s; the kill
  // comes once a flush has sealed all four.
  const Result t = run_until(
      {program("prog_runtime"), "frag2", "10000"},
      {{"LD_PRELOAD", preload_library()}, {"CUMEMTRACE_OUTPUT", dir.path + "/trace-%p.trace"}},
      [&](const std::string&) {
        return flushed_events(dir, "trace-", " alloc device ") == 3 &&
               flushed_events(dir, "trace-", " free device ") == 1;
      },
      SIGKILL);
  REQUIRE(t.exit_code == 128 + SIGKILL);
  const auto r = report(only_trace(dir));
  CHECK(r.at("trace").at("complete") == false);
  CHECK(device(r, 0).at("peak").at("device_bytes") == 3 * 67108864);
  CHECK(device(r, 0).at("end").at("device_bytes") == 2 * 67108864);
  // Every flush was a whole, checksummed chunk: nothing is damaged, and at least the
  // preamble's chunk and the one holding the three allocations and the free were sealed.
  const auto& in = r.at("integrity");
  CHECK(in.at("checksummed") == true);
  CHECK(in.at("checksummed_chunks") >= 2);
  CHECK(in.at("damaged_ranges").empty());
}

TEST_CASE("the library seals every flush with a checksum that a damaged byte breaks") {
  TempDir dir;
  REQUIRE(traced(dir, {program("prog_runtime"), "basic"}).exit_code == 0);
  const std::string path = only_trace(dir);
  const auto r = report(path);
  CHECK(r.at("integrity").at("checksummed") == true);
  CHECK(r.at("integrity").at("figures_complete") == true);
  CHECK(r.at("integrity").at("damaged_ranges").empty());
  // One byte flipped in the middle of the file: reported as damage, figures incomplete.
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  REQUIRE(bytes.size() > 1000);
  bytes[bytes.size() / 2] ^= 0x40;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
  }
  const auto d = report(path);
  REQUIRE(d.at("integrity").at("damaged_ranges").size() == 1);
  const uint64_t off = d.at("integrity").at("damaged_ranges")[0].at("byte_offset");
  const uint64_t len = d.at("integrity").at("damaged_ranges")[0].at("bytes");
  CHECK(off <= bytes.size() / 2);
  CHECK(off + len > bytes.size() / 2);
  CHECK(d.at("integrity").at("figures_complete") == false);
}

TEST_CASE("cumemtrace run passes the exit status through and symbolizes a killed child's trace") {
  TempDir dir;
  const std::string pattern = dir.path + "/run-%p.trace";
  const Result ok = run({cli(), "run", "-o", pattern, "--", program("prog_runtime"), "basic"});
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == run({program("prog_runtime"), "basic"}).out);
  CHECK(ok.err.find("trace written to") != std::string::npos);
  const Result bad = run({cli(), "run", "-o", pattern, "--", program("prog_runtime"), "no-such-scenario"});
  CHECK(bad.exit_code == run({program("prog_runtime"), "no-such-scenario"}).exit_code);
  // SIGTERM to `cumemtrace run` reaches the child; its trace is still symbolized.
  TempDir killed;
  const Result k = run_until(
      {cli(), "run", "-o", killed.path + "/k-%p.trace", "--", program("prog_runtime"), "frag2", "10000"}, {},
      [&](const std::string&) {
        return flushed_events(killed, "k-", " alloc device ") == 3 &&
               flushed_events(killed, "k-", " free device ") == 1;
      },
      SIGTERM);
  CHECK(k.exit_code == 128 + SIGTERM);
  const auto traces = killed.files("k-");
  REQUIRE(traces.size() == 1);
  const Result dump = run({cli(), "dump", traces[0]});
  CHECK(dump.out.find(" symbol ") != std::string::npos);
  CHECK(report(traces[0]).at("trace").at("complete") == false);
}

TEST_CASE("nvidia-smi's figure near the peak splits into tracked, context and untracked") {
  TempDir dir;
  // frag2: three 64 MiB blocks (the peak), the middle one freed at once, then held 400 ms.
  const Result t = traced(dir, {program("prog_runtime"), "frag2", "400"});
  REQUIRE(t.exit_code == 0);
  const auto r = report(only_trace(dir));
  const auto& n = device(r, 0).at("nvml_at_peak");
  REQUIRE(n.is_object());
  // The third 64 MiB block lifts tracked bytes 64 MiB past the last sampled peak: NVML is
  // read by the allocating thread while the peak holds, before the middle block goes.
  CHECK(n.at("snapshot_reason") == "sampled-peak");
  CHECK(n.at("at_peak") == true);
  CHECK(n.at("same_moment") == true);
  CHECK(n.at("device_bytes") == 201326592);
  // 192 MiB in whole granules, plus the 512 MiB context.
  CHECK(n.at("footprint") == 201326592);
  CHECK(n.at("context") == 536870912);
  CHECK(n.at("process_used") == 201326592 + 536870912);
  CHECK(n.at("untracked") == 0);
}
