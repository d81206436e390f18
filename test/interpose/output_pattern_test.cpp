// A field substituted into an output pattern stays inside one file name
// (cumemtrace/rules/output_pattern.h): the trace goes into the folder the pattern names.
#include "cumemtrace/rules/output_pattern.h"

#include <catch2/catch.hpp>

using cumemtrace::output_pattern::expand;
using cumemtrace::output_pattern::path_field;

TEST_CASE("output pattern: a host name ../../x gives no separator and no .. in the file name") {
  // '.' first, '.' beside '.', '/', '.' beside '.', '.', '/' all '_': six, then x.
  CHECK(path_field("../../x") == "______x");
  CHECK(expand("traces/trace-%h-%p.trace", {"../../x", 4242, 0}) == "traces/trace-______x-4242.trace");
  CHECK(expand("%h", {"..", 1, 1}) == "__");
  CHECK(expand("%h", {".hidden", 1, 1}) == "_hidden");
  CHECK(expand("d/%h.trace", {"a/b", 1, 1}) == "d/a_b.trace");
}

TEST_CASE("output pattern: ordinary fields are as they were") {
  CHECK(expand("cumemtrace-%h-%p.trace", {"node1.cluster", 4242, 3}) == "cumemtrace-node1.cluster-4242.trace");
  CHECK(expand("r%r-%p-%%-%x", {"h", 7, 3}) == "r3-7-%-%x");
  CHECK(expand("end%", {"h", 7, 3}) == "end%");
  CHECK(path_field("a.b.c") == "a.b.c");
  CHECK(path_field("a..b") == "a__b");
}
