// The Python package as a user installs it (issue 27): the build's wheel installs into a
// fresh virtual environment with no index (no network), leaves nothing in the source
// tree, and the pytest plugin it brings loads once whether pytest finds it by its entry
// point alone or is also told `-p cumemtrace.pytest_plugin` (which used to crash with
// "Plugin already registered").
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include "harness.h"

using namespace harness;

namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("pytest plugin: the wheel installs offline into a fresh venv and loads once however it is named") {
  const std::string wheel = CUMEMTRACE_WHEEL;
  REQUIRE_FALSE(wheel.empty());  // scripts/setup.sh installs what builds it
  REQUIRE(exists(wheel));
  const std::string source = std::string(CUMEMTRACE_SOURCE_DIR) + "/python";
  CHECK_FALSE(exists(source + "/build"));
  CHECK_FALSE(exists(source + "/cumemtrace.egg-info"));

  TempDir dir;
  const std::string venv = dir.path + "/venv";
  // Debian's pytest comes from the system's site-packages; the package itself only from the wheel.
  Result made = run({"/usr/bin/python3", "-m", "venv", "--system-site-packages", venv});
  REQUIRE(made.exit_code == 0);
  Result installed = run({venv + "/bin/python", "-m", "pip", "install", "--no-index", "--no-deps", "--no-cache-dir",
                          "--disable-pip-version-check", wheel},
                         {{"PIP_NO_INPUT", "1"}});
  INFO(installed.out << installed.err);
  REQUIRE(installed.exit_code == 0);

  const std::string cases = std::string(CUMEMTRACE_SOURCE_DIR) + "/test/integration/python/pytest_cases";
  for (const bool named : {false, true}) {
    std::vector<std::string> argv = {venv + "/bin/python", "-m", "pytest"};
    if (named) argv.insert(argv.end(), {"-p", "cumemtrace.pytest_plugin"});
    argv.insert(argv.end(), {"-p", "no:cacheprovider", "-q", "-rA", "--no-header", "--trace-config",
                             "--rootdir=" + cases, cases + "/test_cuda_memory.py"});
    TempDir traces;
    // No PYTHONPATH: the plugin must come from the venv's site-packages.
    const Result r =
        traced(traces, argv, {{"CUDART", std::string(CUMEMTRACE_SIM_DIR) + "/libcudart.so.13"}, {"COLUMNS", "1000"}});
    INFO((named ? "with -p: " : "entry point only: ") << r.out << r.err);
    CHECK(r.exit_code == 1);  // the same outcomes as from a checkout (pytest_plugin_test.cpp)
    CHECK(has(r.out, "3 failed, 3 passed"));
    CHECK_FALSE(has(r.out + r.err, "already registered"));
    // --trace-config lists each plugin as it registers: this one once, from the venv.
    const std::string registered = "PLUGIN registered: <module 'cumemtrace.pytest_plugin' from '" + venv + "/lib/";
    const size_t first = r.out.find(registered);
    CHECK(first != std::string::npos);
    CHECK(r.out.find("PLUGIN registered: <module 'cumemtrace.pytest_plugin'", first + 1) == std::string::npos);
  }
}
