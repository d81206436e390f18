// What hostile testing found, pinned down: each case failed before its fix.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "harness.h"

using namespace harness;

TEST_CASE("a library dlopen'ed RTLD_LOCAL that links the runtime works and is traced") {
  TempDir dir;
  const std::vector<std::string> cmd{here("rtld_local_main"), here("librtld_local_lib.so"), "local"};
  const Result plain = run(cmd);
  const Result t = traced(dir, cmd);
  REQUIRE(plain.out.find("cudaMalloc=0 ") != std::string::npos);
  CHECK(t.out == plain.out);  // it used to get error 3 from every hooked call
  CHECK(t.exit_code == plain.exit_code);
  const auto r = report(only_trace(dir));
  CHECK(device(r, 0).at("counts_by_api").at("cudaMalloc").at("allocs") == 1);
  CHECK(device(r, 0).at("counts_by_api").at("cuMemAlloc_v2").at("allocs") == 1);
  CHECK(device(r, 0).at("end").at("device_bytes") == 1000 + 2000);
}

TEST_CASE("errno survives context creation where NVML is missing") {
  TempDir dir, libs;
  // Only the driver and runtime: loading NVML fails with ENOENT inside the hook.
  for (const char* lib : {"libcuda.so.1", "libcudart.so.13"})
    std::filesystem::create_symlink(std::filesystem::canonical(std::string(CUMEMTRACE_SIM_DIR) + "/" + lib),
                                    libs.path + "/" + lib);
  const Env env{{"LD_LIBRARY_PATH", libs.path}};
  const Result plain = run({here("errno_context")}, env);
  const Result t = traced(dir, {here("errno_context")}, env);
  CHECK(plain.exit_code == 0);
  CHECK(t.out == plain.out);
  CHECK(t.exit_code == 0);
  CHECK(t.err.find("NVML not available") != std::string::npos);  // said once, on stderr
}

TEST_CASE("dlsym(RTLD_DEFAULT) finds no CUDA function in a process that loaded none") {
  TempDir dir;
  const Result plain = run({here("dlsym_absent")});
  const Result t = traced(dir, {here("dlsym_absent")});
  CHECK(plain.out == "cudaMalloc absent (dlerror set), cuMemAlloc_v2 absent\n");
  CHECK(t.out == plain.out);
}

TEST_CASE("exec keeps every event of the image it replaces") {
  TempDir dir;
  // 100 allocations, then execv of itself, which makes 100 more and exits.
  const Result t = traced(dir, {here("exec_loses_events")}, {{"CUMEMTRACE_OUTPUT", dir.path + "/x.trace"}});
  REQUIRE(t.exit_code == 0);
  const auto first = report(dir.path + "/x.trace");     // the image exec replaced: an exec End
  const auto second = report(dir.path + "/x.trace.1");  // same pid, so the next free name
  CHECK(device(first, 0).at("counts").at("allocs") == 100);
  CHECK(first.at("trace").at("complete") == true);
  CHECK(first.at("trace").at("exec_into") == here("exec_loses_events"));
  CHECK(device(second, 0).at("counts").at("allocs") == 100);
  CHECK(second.at("trace").at("complete") == true);
}

TEST_CASE("an exec before the first CUDA call does not cost the device of later allocations") {
  TempDir dir;
  const Result t = traced(dir, {here("vfork_exec_first")});
  REQUIRE(t.out == "true exited 0, cudaMalloc 0\n");
  const auto r = report(only_trace(dir));
  CHECK(device(r, 0).at("counts").at("allocs") == 1);
  CHECK(device(r, 0).at("name") == "NVIDIA H200 (simulated)");
}

TEST_CASE("forked children never hang in their first unwind") {
  TempDir dir;
  // Each of 300 children of a single-threaded parent makes one CUDA call and exits; a
  // 1 ms flush keeps the writer inside dl_iterate_phdr often. The program kills and
  // counts a child that takes over 5 s.
  const Result t = traced(dir, {here("fork_child_hang"), "300"},
                          {{"CUMEMTRACE_FLUSH_MS", "1"}, {"CUMEMTRACE_OUTPUT", dir.path + "/f-%p.trace"}});
  INFO(t.err);  // a hung child's stacks (fork_child_hang.c)
  CHECK(t.out == "0 of 300 children hung\n");
  CHECK(t.exit_code == 0);
}

TEST_CASE("a fork while the writer's snapshot is inside NVML's loader work: children never hang") {
  TempDir dir;
  // Each NVML process listing holds glibc's list of loaded objects for 20 ms (as a real
  // NVML loading a library does) and the writer snapshots every 1 ms, so nearly every
  // fork would catch it there; a child made then hung in its first unwind.
  const Result t = traced(dir, {here("fork_child_hang"), "10"},
                          {{"CUMEMTRACE_FLUSH_MS", "1"},
                           {"CUMEMTRACE_SNAPSHOT_MS", "1"},
                           {"SIMNVML_LOADER_US", "20000"},
                           {"CUMEMTRACE_OUTPUT", dir.path + "/f-%p.trace"}});
  INFO(t.err);  // a hung child's stacks (fork_child_hang.c)
  CHECK(t.out == "0 of 10 children hung\n");
  CHECK(t.exit_code == 0);
  // Such a child records without stacks (the loader's lock may be held), and says so.
  CHECK(t.err.find("its events are recorded without stacks") != std::string::npos);
}

TEST_CASE("a fork while another thread is inside the tracer's NVTX bookkeeping: children never hang") {
  TempDir dir;
  // A worker thread opens and ends NVTX ranges without pause while the main thread forks
  // 100 children, each opening a range and allocating. Before, 10 to 17 of 100 hung on
  // the open ranges' lock, held in the child by a thread it does not have.
  const Result t =
      traced(dir, {here("fork_nvtx_threads"), "100"},
             {{"NVTX_INJECTION64_PATH", preload_library()}, {"CUMEMTRACE_OUTPUT", dir.path + "/n-%p.trace"}});
#if defined(CUMEMTRACE_ASAN_TREE)
  // GCC 12's AddressSanitizer allocator is not fork-safe: a child still hangs in it, about
  // 1 run in 6, when the writer's round (10^7 marks to compress) outlasts the 50 ms a fork
  // waits for it (docs/capture-and-fork.md). The plain and TSan trees ask for none.
  CHECK(t.out.find(" of 100 children hung\n") != std::string::npos);
#else
  CHECK(t.out == "0 of 100 children hung\n");
  CHECK(t.exit_code == 0);
#endif
#if !defined(__SANITIZE_THREAD__) && !defined(CUMEMTRACE_ASAN_TREE)
  // ThreadSanitizer ends a threaded process's child that starts a thread.
  CHECK(dir.files("n-").size() == 101);  // the parent's trace and one per child
#endif
}

TEST_CASE("a manifest path that is not a manifest of `cumemtrace run` gets no line") {
  TempDir dir;
  const std::string victim = dir.path + "/passwd";
  std::ofstream(victim) << "root:x:0:0::/root:/bin/sh\n";
  chmod(victim.c_str(), 0644);
  const Result t = traced(dir, {program("prog_runtime"), "basic"}, {{"CUMEMTRACE_MANIFEST", victim}});
  CHECK(t.exit_code == 0);
  std::stringstream content;
  content << std::ifstream(victim).rdbuf();
  CHECK(content.str() == "root:x:0:0::/root:/bin/sh\n");
  CHECK(t.err.find("is not a manifest") != std::string::npos);
}

TEST_CASE("CUMEMTRACE_LOG=info ends with what the snapshots' readings cost, one count per snapshot written") {
  TempDir dir;
  const Result t = traced(dir, {program("prog_runtime"), "basic"}, {{"CUMEMTRACE_LOG", "info"}});
  CHECK(t.exit_code == 0);
  const std::regex line(R"(info: snapshots: (\d+) \((\d+) samplings\); NVML [0-9.]+ ms in all, [0-9.]+ ms at most; )"
                        R"(driver [0-9.]+ ms in all, [0-9.]+ ms at most)");
  std::smatch m;
  REQUIRE(std::regex_search(t.err, m, line));
  const size_t written = dump_events(only_trace(dir), R"(\n@[0-9+]+ snapshot )");
  CHECK(written >= 1);  // at least the one at exit
  CHECK(std::stoul(m[1]) == written);
  CHECK(std::stoul(m[2]) >= written);  // a snapshot samples once, or again for a reading of one moment
}

TEST_CASE("garbage in the configuration warns and falls back, never wraps around") {
  TempDir dir;
  // 2^44 MiB would wrap to a 0-byte buffer limit (every event dropped); "yes please" and
  // "loud" are not values at all.
  const Result t = traced(dir, {program("prog_runtime"), "basic"},
                          {{"CUMEMTRACE_BUFFER_MB", "17592186044416"},
                           {"CUMEMTRACE_GRANULE", "18446744073709551615"},
                           {"CUMEMTRACE_DISABLE", "yes please"},
                           {"CUMEMTRACE_LOG", "loud"}});
  CHECK(t.exit_code == 0);
  CHECK(t.err.find("CUMEMTRACE_BUFFER_MB=\"17592186044416\" is above the largest value allowed") != std::string::npos);
  CHECK(t.err.find("CUMEMTRACE_GRANULE=\"18446744073709551615\" is above") != std::string::npos);
  CHECK(t.err.find("CUMEMTRACE_DISABLE=\"yes please\" is not one of") != std::string::npos);
  CHECK(t.err.find("CUMEMTRACE_LOG=\"loud\" is not a log level") != std::string::npos);
  const auto r = report(only_trace(dir));
  CHECK(r.at("trace").at("events_dropped") == 0);
  CHECK(device(r, 0).at("counts").at("allocs") == 7);
  CHECK(r.at("process").at("granule_bytes") == (1ull << 30));
}
