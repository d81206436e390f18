// Test-only: a private directory under /tmp, removed with everything in it at the end of
// its scope, and a file's bytes.
#pragma once

#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <string>

#include "catch.h"
#include "shell.h"

namespace cumemtrace::test {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/cumemtrace-test-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    path = tmpl;
  }
  ~TempDir() { shell("rm -rf '" + path + "'"); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

inline std::string read_file(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path, std::ios::binary).rdbuf();
  return s.str();
}

}  // namespace cumemtrace::test
