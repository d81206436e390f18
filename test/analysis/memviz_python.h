// Test-only: a memviz snapshot loaded the way PyTorch would (memviz_load.py), and what
// that script prints about it, as JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "catch.h"
#include "shell.h"

namespace cumemtrace::test {

inline nlohmann::json load_with_python(const std::string& pickle_path) {
  auto r = shell("/usr/bin/python3 " CUMEMTRACE_MEMVIZ_LOAD " " + pickle_path);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace cumemtrace::test
