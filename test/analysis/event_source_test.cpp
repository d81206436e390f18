// A trace read in passes (event_source.h) whose file changes under it: cut short (the
// SIGBUS a truncated mapping raises is caught: cut_guard.h) or written over in place
// between passes. Either way the TraceFile says it changed instead of the command giving
// figures that mix two files.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "catch.h"
#include "event_source.h"
#include "report.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::TraceBuilder;

namespace {

std::vector<uint8_t> small_trace() {
  TraceBuilder b;
  b.process().device(0, 1ull << 30).stack(1, 0, 0x1000);
  for (uint64_t i = 0; i < 64; ++i) b.alloc(10 + i, 0x7f0000000000 + (i << 20), 4096, 1);
  b.end(100);
  return b.vec();
}

}  // namespace

TEST_CASE("a mapped file cut short under the reader reads as zeros past its new end and says it was cut") {
  char path[] = "/tmp/cumemtrace-cut-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const std::vector<uint8_t> page(1 << 16, 0xAB);
  for (int i = 0; i < 16; ++i) REQUIRE(write(fd, page.data(), page.size()) == ssize_t(page.size()));  // 1 MiB
  {
    const MappedFile file(path);
    REQUIRE(file.bytes().size() == (1u << 20));
    CHECK_FALSE(file.cut());
    REQUIRE(ftruncate(fd, 1 << 16) == 0);  // 64 KiB left
    const auto bytes = file.bytes();
    CHECK(bytes[100] == 0xAB);              // still in the file
    CHECK(bytes[(1 << 20) - 1] == 0);       // past the new end: a zero page, no SIGBUS
    CHECK(bytes[(1 << 19)] == 0);
    CHECK(file.cut());
  }
  close(fd);
  unlink(path);
}

TEST_CASE("events written over in place between passes are noticed: the file changed") {
  std::vector<uint8_t> bytes = small_trace();
  const TraceFile file(bytes, "t.trace", /*hold_bytes=*/0);
  REQUIRE(file.events().size() == 64);
  CHECK_FALSE(file.changed());
  size_t seen = 0;
  file.events().scan([&](const Event&, size_t) { ++seen; });
  CHECK(seen == 64);
  CHECK_FALSE(file.changed());  // the same bytes read again
  bytes[bytes.size() / 2] ^= 0xFF;  // inside one sealed event's chunk: it no longer reads
  (void)build_report(file.trace(), file.events(), ReportOptions{});
  CHECK(file.changed());
}
