// The preload library must never change what the program sees nor hurt it: files,
// symlinks, unwritable places, fork, processes without CUDA, symbol visibility, dlsym.
#include <catch2/catch.hpp>

#include <cstdlib>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "harness.h"

using namespace harness;

TEST_CASE("a process that never touches CUDA, and its forked child, leave no trace file") {
  TempDir dir;
  const Result t = traced(dir, {program("prog_nocuda")});
  CHECK(t.exit_code == 0);
  CHECK(t.out == "no cuda here\n");
  CHECK(t.err.empty());
  CHECK(dir.files().empty());
}

TEST_CASE("a forked child that does not touch CUDA leaves no trace, the parent's is whole") {
  // The child exits through exit(), leaving the parent's tracker state behind unfreed (by
  // design: tracker_after_fork_child). Under ASan, LeakSanitizer would report that at the
  // child's exit and, in a child of a threaded parent, can hang there (threads it cannot
  // suspend): no leak check in these runs. Outside ASan the variable is ignored.
  const char* asan = std::getenv("ASAN_OPTIONS");
  const Env no_leak_check{{"ASAN_OPTIONS", std::string(asan ? asan : "") + ":detect_leaks=0"}};
  for (const char* scenario : {"fork", "fork-sleep"}) {
    TempDir dir;
    const Result t = traced(dir, {program("prog_runtime"), scenario}, no_leak_check);
    REQUIRE(t.exit_code == 0);
    const auto r = report(only_trace(dir));
    CHECK(device(r, 0).at("counts").at("allocs") == 1);
    CHECK(device(r, 0).at("counts").at("frees") == 1);
    CHECK(r.at("trace").at("complete") == true);
  }
}

TEST_CASE("trace files are created 0600") {
  TempDir dir;
  REQUIRE(traced(dir, {program("prog_runtime"), "basic"}).exit_code == 0);
  struct stat st {};
  REQUIRE(stat(only_trace(dir).c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("a symlink at the trace path is never written through") {
  TempDir dir;
  const std::string victim = dir.path + "/victim", link = dir.path + "/fixed.trace";
  std::ofstream(victim) << "keep me";
  REQUIRE(symlink(victim.c_str(), link.c_str()) == 0);
  const Result t = traced(dir, {program("prog_runtime"), "basic"}, {{"CUMEMTRACE_OUTPUT", link}});
  REQUIRE(t.exit_code == 0);
  std::stringstream content;
  content << std::ifstream(victim).rdbuf();
  CHECK(content.str() == "keep me");
  struct stat st {};
  REQUIRE(lstat((link + ".1").c_str(), &st) == 0);  // the next free name instead
  CHECK(S_ISREG(st.st_mode));
}

TEST_CASE("CUMEMTRACE_OUTPUT at a symlink to a directory, plain or via /proc/self/root: nothing lands in the target") {
  for (const std::string via : {"", "/proc/self/root"}) {
    INFO("link to " << via << "DIR/real");
    TempDir dir;
    const std::string real = dir.path + "/real", link = dir.path + "/out";
    REQUIRE(mkdir(real.c_str(), 0700) == 0);
    REQUIRE(symlink((via + real).c_str(), link.c_str()) == 0);
    const Result plain = run({program("prog_runtime"), "basic"});
    const Result t = traced(dir, {program("prog_runtime"), "basic"}, {{"CUMEMTRACE_OUTPUT", link}});
    CHECK(t.exit_code == plain.exit_code);
    CHECK(t.out == plain.out);
    const Result listed = run({"/bin/ls", "-A", real});
    CHECK(listed.out.empty());  // the link's target got nothing
    struct stat st {};
    REQUIRE(lstat((link + ".1").c_str(), &st) == 0);  // the next free name beside the link
    CHECK(S_ISREG(st.st_mode));
    CHECK(t.err.find("CUMEMTRACE_OUTPUT=" + link +
                     " is a symbolic link, never followed; the trace gets the next free name beside it") !=
          std::string::npos);
    CHECK(device(report(link + ".1"), 0).at("counts").at("allocs") == 7);
  }
}

TEST_CASE("an unwritable output path costs a warning, never the job") {
  TempDir dir;
  const std::string not_a_dir = dir.path + "/file";
  std::ofstream(not_a_dir) << "x";
  const Result plain = run({program("prog_runtime"), "basic"});
  const Result t = traced(dir, {program("prog_runtime"), "basic"}, {{"CUMEMTRACE_OUTPUT", not_a_dir + "/t.trace"}});
  CHECK(t.exit_code == plain.exit_code);
  CHECK(t.out == plain.out);
  CHECK(t.err.find("cannot create trace file") != std::string::npos);
}

TEST_CASE("the library exports only the hooked entry points, its C API and NVTX's injection entries, needs no CUDA") {
  const Result nm = run({"/usr/bin/nm", "-D", "--defined-only", preload_library()});
  REQUIRE(nm.exit_code == 0);
  std::istringstream lines(nm.out);
  int count = 0;
  for (std::string addr, type, name; lines >> addr >> type >> name; ++count)
    CHECK((name == "dlsym" || name.rfind("cu", 0) == 0 || name.rfind("exec", 0) == 0 || name == "fexecve" ||
           name == "InitializeInjectionNvtx2" || name == "InitializeInjectionNvtxExtension" || name == "_exit" ||
           name == "_Exit" || name == "__libc_start_main" || name == "dlerror" || name == "sigaction" ||
           name == "signal" ||
           // PyTorch's caching allocator reports its blocks through these (hook_table.def)
           name == "_ZN3c1027reportMemoryUsageToProfilerEPvlmmNS_6DeviceE" ||
           name == "_ZN3c1027reportOutOfMemoryToProfilerElmmNS_6DeviceE"));
  CHECK(nm.out.find(" cudaMalloc\n") != std::string::npos);
  CHECK(nm.out.find(" cuMemAlloc_v2\n") != std::string::npos);
  CHECK(nm.out.find(" cuGetProcAddress_v2\n") != std::string::npos);
  CHECK(nm.out.find(" execl\n") != std::string::npos);
  CHECK(nm.out.find(" cumemtrace_allocator_segments\n") != std::string::npos);  // include/cumemtrace/api.h
  CHECK(nm.out.find(" cumemtrace_mark\n") != std::string::npos);
  CHECK(nm.out.find(" InitializeInjectionNvtx2\n") != std::string::npos);          // interpose/api/nvtx.cpp
  CHECK(nm.out.find(" InitializeInjectionNvtxExtension\n") != std::string::npos);  // interpose/api/nvtx_mem.cpp
  CHECK(nm.out.find(" sigaction\n") != std::string::npos);  // interpose/write/fatal_signal.h: the program's view
  CHECK(nm.out.find(" dlerror\n") != std::string::npos);    // interpose/resolve/dlerror.cpp
  CHECK(count > 30);
  const Result needed = run({"/usr/bin/readelf", "-d", preload_library()});
  CHECK(needed.out.find("libcuda") == std::string::npos);
  CHECK(needed.out.find("libcudart") == std::string::npos);
  CHECK(needed.out.find("libunwind") == std::string::npos);
  CHECK(needed.out.find("libspdlog") == std::string::npos);
  CHECK(needed.out.find("libfmt") == std::string::npos);
}

TEST_CASE("dlsym(RTLD_NEXT) through our dlsym still resolves relative to the caller") {
  TempDir dir;
  const std::string prog = std::string(CUMEMTRACE_TEST_LIBS_DIR) + "/rtld_next_program";
  const Result plain = run({prog}, {{"LD_LIBRARY_PATH", CUMEMTRACE_TEST_LIBS_DIR}});
  const Result t = traced(dir, {prog}, {{"LD_LIBRARY_PATH", CUMEMTRACE_TEST_LIBS_DIR}});
  CHECK(plain.out == "next after caller: target\n");
  CHECK(t.out == plain.out);
  CHECK(t.exit_code == 0);
}

TEST_CASE("CUMEMTRACE_DISABLE=1 forwards everything and writes nothing") {
  TempDir dir;
  const Result t = traced(dir, {program("prog_runtime"), "basic"}, {{"CUMEMTRACE_DISABLE", "1"}});
  CHECK(t.exit_code == 0);
  CHECK(t.out == run({program("prog_runtime"), "basic"}).out);
  CHECK(dir.files().empty());
}
