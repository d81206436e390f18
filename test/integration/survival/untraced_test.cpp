// No process left untraced: processes that end without our destructor (_exit, a fatal
// signal) soon after their first CUDA call still leave a trace that holds it; and the
// trace goes somewhere sensible whatever CUMEMTRACE_OUTPUT names.
#include <catch2/catch.hpp>

#include <signal.h>

#include "harness.h"

using namespace harness;

namespace {

// The only trace in `dir` holds `allocs` allocations, and an EndRecord if `complete`.
void check_trace(const TempDir& dir, int allocs, bool complete) {
  const auto r = report(only_trace(dir));
  CHECK(r.at("trace").at("complete") == complete);
  CHECK(device(r, 0).at("counts").at("allocs") == allocs);
}

}  // namespace

TEST_CASE("_exit and _Exit right after the first allocation leave a complete trace holding it") {
  for (const char* how : {"_exit", "_Exit"}) {
    INFO(how);
    TempDir dir;
    const Result t = traced(dir, {here("exit_early"), how});
    CHECK(t.exit_code == 0);
    CHECK(t.err.empty());
    const auto r = report(only_trace(dir));
    CHECK(r.at("trace").at("complete") == true);
    CHECK(device(r, 0).at("counts").at("allocs") == 1);
    CHECK(device(r, 0).at("end").at("device_bytes") == 1 << 20);
  }
}

TEST_CASE("a fatal signal right after the first allocation: the trace holds it, the process dies of it") {
  const std::pair<const char*, int> cases[] = {
      {"segv", SIGSEGV}, {"abort", SIGABRT}, {"bus", SIGBUS}, {"fault", SIGSEGV}};
  for (const auto& [how, sig] : cases) {
    INFO(how);
    TempDir dir;
    const Result t = traced(dir, {here("exit_early"), how});
    CHECK(t.exit_code == 128 + sig);  // re-raised with the default disposition
    check_trace(dir, 1, false);       // no EndRecord: nothing ran after the signal
  }
}

TEST_CASE("a SIGSEGV handler the program installs after its first CUDA call still runs") {
  TempDir dir;
  const Result t = traced(dir, {here("exit_early"), "handler"});
  CHECK(t.out == "program's handler ran\n");
  CHECK(t.exit_code == 3);
  check_trace(dir, 1, true);  // the handler's _exit finished the trace
}

// The End record's exit status (trace 1.15): a return from main reaches the library's
// on_exit handler (exit_early returns 9 for a word it does not know), a program's _exit(3)
// its _exit hook. Only the framework variables of the environment are kept.
TEST_CASE("the trace keeps the exit status and, of the environment, the framework variables alone") {
  TempDir dir;
  const Result t = traced(dir, {here("exit_early"), "return"},
                          {{"XLA_PYTHON_CLIENT_MEM_FRACTION", "0.5"}, {"CUMEMTRACE_TEST_SECRET", "not kept"}});
  CHECK(t.exit_code == 9);
  const auto r = report(only_trace(dir));
  CHECK(r.at("exit_status") == 9);
  CHECK(r.at("process").at("environment") == nlohmann::json{{"XLA_PYTHON_CLIENT_MEM_FRACTION", "0.5"}});

  TempDir handled;
  REQUIRE(traced(handled, {here("exit_early"), "handler"}).exit_code == 3);
  CHECK(report(only_trace(handled)).at("exit_status") == 3);
  TempDir quick;
  REQUIRE(traced(quick, {here("exit_early"), "_exit"}).exit_code == 0);
  CHECK(report(only_trace(quick)).at("exit_status") == 0);
}

// A trace begun before main (before_main_lib's constructor allocates): main's return (7) and
// exit(5) reach the End record all the same, though the library's first handler was
// registered before the loader's finalizer.
TEST_CASE("a trace begun before main keeps the exit status of main's return and of exit") {
  TempDir returned;
  REQUIRE(traced(returned, {here("before_main")}).exit_code == 7);
  CHECK(report(only_trace(returned)).at("exit_status") == 7);
  TempDir exited;
  REQUIRE(traced(exited, {here("before_main"), "exit"}).exit_code == 5);
  CHECK(report(only_trace(exited)).at("exit_status") == 5);
}

TEST_CASE("a vfork child's _exit after a failed exec leaves the parent's trace alone") {
  TempDir dir;
  const Result t = traced(dir, {here("exit_early"), "vfork"});
  CHECK(t.out == "child exited 127\n");
  CHECK(t.exit_code == 0);
  const auto r = report(only_trace(dir));
  CHECK(r.at("trace").at("complete") == true);
  CHECK(r.at("trace").at("events") == 3);  // 2 allocations and the primary context
  CHECK(device(r, 0).at("counts").at("allocs") == 2);
}

TEST_CASE("a Python multiprocessing child that allocates leaves a trace holding it") {
  const std::string script = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/mp_child.py";
  const std::string runtime = std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13";
  TempDir dir;
  const Result t = traced(dir, {"/usr/bin/python3", script, runtime});
  CHECK(t.out == "child exited 0\n");
  CHECK(t.exit_code == 0);
  check_trace(dir, 1, true);  // the child's: the parent never touched CUDA
}

TEST_CASE("an output path that is a directory gets the default name inside it, and says so") {
  TempDir dir;
  const Result t = traced(dir, {program("prog_runtime"), "basic"}, {{"CUMEMTRACE_OUTPUT", dir.path}});
  CHECK(t.exit_code == 0);
  const auto traces = dir.files("cumemtrace-");
  REQUIRE(traces.size() == 1);
  CHECK(t.err.find("CUMEMTRACE_OUTPUT=" + dir.path + " is a directory; the trace goes to " + traces[0]) !=
        std::string::npos);
  CHECK(device(report(traces[0]), 0).at("counts").at("allocs") == 7);
}

TEST_CASE("an output path that is a device gets the default name in the current directory, and says so") {
  TempDir dir;
  const Result t = traced(dir, {"/bin/sh", "-c", "cd '" + dir.path + "' && exec " + program("prog_runtime") + " basic"},
                          {{"CUMEMTRACE_OUTPUT", "/dev/null"}});
  CHECK(t.exit_code == 0);
  const auto traces = dir.files("cumemtrace-");
  REQUIRE(traces.size() == 1);
  const std::string name = traces[0].substr(dir.path.size() + 1);
  CHECK(t.err.find("CUMEMTRACE_OUTPUT=/dev/null is not a regular file; the trace goes to " + name) !=
        std::string::npos);
  CHECK(device(report(traces[0]), 0).at("counts").at("allocs") == 7);
}
