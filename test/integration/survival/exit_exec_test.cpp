// Exits and execs that run no destructor of ours (issue 29, item 5): quick_exit, and the
// exec calls by descriptor. Each image's trace ends whole; an exec says into what, and
// counts as a clean end for `check`. Figures from exit_exec.c: allocation i is (i + 1) MiB.
#include <catch2/catch.hpp>

#include <filesystem>

#include "harness.h"
#include "sizes.h"

using namespace harness;

namespace {

int check_leaked(const std::string& trace, uint64_t bytes) {
  return run({cli(), "check", trace, "--max-leaked", std::to_string(bytes)}).exit_code;
}

// The first image's trace after `how` with `count` allocations, and the exec'd image's.
void check_exec(const std::string& how, int count, const std::string& into) {
  INFO(how);
  TempDir dir;
  const Result t =
      traced(dir, {here("exit_exec"), how, std::to_string(count)}, {{"CUMEMTRACE_OUTPUT", dir.path + "/x.trace"}});
  REQUIRE(t.exit_code == 0);
  const auto first = report(dir.path + "/x.trace");
  CHECK(first.at("trace").at("complete") == true);
  CHECK(first.at("trace").at("exec_into") == into);
  CHECK(first.at("integrity").at("figures_complete") == true);
  CHECK(device(first, 0).at("counts").at("allocs") == count);
  const uint64_t live = uint64_t(count) * (count + 1) / 2 * MiB;  // 1 + 2 + ... + count MiB
  CHECK(device(first, 0).at("end").at("device_bytes") == live);
  CHECK(check_leaked(dir.path + "/x.trace", live) == 0);  // an exec is a clean end
  CHECK(check_leaked(dir.path + "/x.trace", live - 1) == 1);
  const auto second = report(dir.path + "/x.trace.1");  // same pid: the next free name
  CHECK(second.at("trace").at("complete") == true);
  CHECK(second.at("trace").at("exec_into") == nullptr);
  CHECK(device(second, 0).at("counts").at("allocs") == 1);
  CHECK(device(second, 0).at("end").at("device_bytes") == 7 * MiB);
}

}  // namespace

TEST_CASE("quick-exit right after the allocations: the trace ends whole, with what its handlers freed") {
  for (int count : {3, 40}) {
    INFO(count);
    TempDir dir;
    const Result t = traced(dir, {here("exit_exec"), "quick_exit", std::to_string(count)});
    CHECK(t.exit_code == 0);
    const auto r = report(only_trace(dir));
    CHECK(r.at("trace").at("complete") == true);
    CHECK(r.at("trace").at("exec_into") == nullptr);
    CHECK(device(r, 0).at("counts").at("allocs") == count);
    CHECK(device(r, 0).at("counts").at("frees") == 1);  // the program's at_quick_exit handler
    CHECK(device(r, 0).at("end").at("device_bytes") == (uint64_t(count) * (count + 1) / 2 - 2) * MiB);
  }
}

TEST_CASE("an exec ends the trace whole and says into what: execve, execveat by directory, fexecve") {
  const std::string self = here("exit_exec");
  const std::string canonical = std::filesystem::canonical(self).string();
  check_exec("execve", 101, self);
  check_exec("execve", 1, self);
  check_exec("execveat", 101, canonical);  // the directory's name from /proc, then the relative name
  check_exec("fexecve", 101, canonical);
  check_exec("fexecve", 2, canonical);
}

TEST_CASE("an exec that fails: tracing goes on and the trace ends at the exit, not at the exec") {
  TempDir dir;
  const Result t = traced(dir, {here("exit_exec"), "execve_fails", "2"});
  REQUIRE(t.exit_code == 0);
  const auto r = report(only_trace(dir));
  CHECK(r.at("trace").at("complete") == true);
  CHECK(r.at("trace").at("exec_into") == nullptr);
  CHECK(r.at("integrity").at("figures_complete") == true);
  CHECK(device(r, 0).at("counts").at("allocs") == 3);
  CHECK(device(r, 0).at("end").at("device_bytes") == (1 + 2 + 9) * MiB);
}

TEST_CASE("an exec that fails, then a kill: the exec's End record is set aside, the trace reads cut short") {
  TempDir dir;
  const Result t = traced(dir, {here("exit_exec"), "execve_fails_killed", "2"}, {{"CUMEMTRACE_FLUSH_MS", "1"}});
  REQUIRE(t.exit_code == 128 + 9);
  const auto r = report(only_trace(dir));
  CHECK(r.at("trace").at("complete") == false);
  CHECK(r.at("trace").at("exec_into") == nullptr);
  CHECK(device(r, 0).at("counts").at("allocs") == 3);  // the one after the failed exec was flushed
}
