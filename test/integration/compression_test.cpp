// Compressed flushes (trace format 1.7, on by default): the same job traced with and
// without CUMEMTRACE_COMPRESS gives the same figures from fewer bytes.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include "harness.h"

using namespace harness;

namespace {

uint64_t file_bytes(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

}  // namespace

TEST_CASE("compressed and plain traces of one job give the same figures, and dump shows the records inside") {
  TempDir plain_dir, packed_dir;
  REQUIRE(traced(plain_dir, {here("iterations")}, {{"CUMEMTRACE_COMPRESS", "0"}}).exit_code == 0);
  REQUIRE(traced(packed_dir, {here("iterations")}).exit_code == 0);
  const std::string plain = only_trace(plain_dir), packed = only_trace(packed_dir);
  const auto a = report(plain), b = report(packed);
  CHECK(a.at("integrity").at("damaged_ranges").empty());
  CHECK(b.at("integrity").at("damaged_ranges").empty());
  CHECK(device(b, 0).at("peak").at("device_bytes") == 80740352);  // the reference job (iterations.c)
  CHECK(device(a, 0).at("peak").at("device_bytes") == device(b, 0).at("peak").at("device_bytes"));
  REQUIRE(a.at("leaks").size() == b.at("leaks").size());
  for (size_t i = 0; i < a.at("leaks").size(); ++i) {  // addresses differ from run to run (ASLR)
    CHECK(a.at("leaks").at(i).at("bytes") == b.at("leaks").at(i).at("bytes"));
    CHECK(a.at("leaks").at(i).at("count") == b.at("leaks").at(i).at("count"));
  }
  CHECK(device(a, 0).at("counts") == device(b, 0).at("counts"));
  CHECK(file_bytes(packed) < file_bytes(plain));
  const Result d = run({cli(), "dump", packed});
  CHECK(d.out.find(" compressed ") != std::string::npos);
  CHECK(d.out.find("+0 ") != std::string::npos);  // the first record inside one: "@OFFSET+0 ..."
  const Result p = run({cli(), "dump", plain});
  CHECK(p.out.find(" compressed ") == std::string::npos);
}
