// A trace read in passes (event_source.h) whose file changes under it: cut short (the
// SIGBUS a truncated mapping raises is caught: cut_guard.h) or written over in place
// between passes. Either way the TraceFile says it changed instead of the command giving
// figures that mix two files.
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "catch.h"
#include "read/event_source.h"
#include "read/reader_chunks.h"
#include "reports/report.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::TraceBuilder;

namespace {

std::vector<uint8_t> small_trace_bytes() {
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
    CHECK(bytes[100] == 0xAB);         // still in the file
    CHECK(bytes[(1 << 20) - 1] == 0);  // past the new end: a zero page, no SIGBUS
    CHECK(bytes[(1 << 19)] == 0);
    CHECK(file.cut());
  }
  close(fd);
  unlink(path);
}

TEST_CASE("events written over in place between passes are noticed: the file changed") {
  std::vector<uint8_t> bytes = small_trace_bytes();
  const TraceFile file(bytes, "t.trace", /*hold_bytes=*/0);
  REQUIRE(file.events().size() == 64);
  CHECK_FALSE(file.changed());
  size_t seen = 0;
  file.events().scan([&](const Event&, size_t) { ++seen; });
  CHECK(seen == 64);
  CHECK_FALSE(file.changed());      // the same bytes read again
  bytes[bytes.size() / 2] ^= 0xFF;  // inside one sealed event's chunk: it no longer reads
  (void)build_report(file.trace(), file.events(), ReportOptions{});
  CHECK(file.changed());
}

namespace {

// The process's peak resident set since `reset` (VmHWM, /proc/self/status), in bytes;
// writing 5 to /proc/self/clear_refs starts the peak over (Linux 4.0 on). 0: not known.
uint64_t peak_rss(bool reset) {
  if (reset) {
    FILE* f = fopen("/proc/self/clear_refs", "w");
    if (!f) return 0;
    const bool ok = fputs("5", f) >= 0;
    if (fclose(f) != 0 || !ok) return 0;
  }
  FILE* f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  uint64_t kb = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %lu kB", &kb) == 1) break;
  fclose(f);
  return kb << 10;
}

}  // namespace

TEST_CASE("a long damaged stretch between sealed chunks is searched without holding it whole") {
  // Sealed chunks, 384 MiB of bytes without a seal (damage, or a sparse file's hole),
  // then more sealed chunks: every pass searches the stretch for the next seal. Before,
  // the search held all of it (the attack on 099ad96: 3.17 GB of RSS on a 3 GB file).
  TraceBuilder b;
  b.process().device(0, 1ull << 30).stack(1, 0, 0x1000);
  for (uint64_t i = 0; i < 4; ++i) b.alloc(10 + i, 0x7f0000000000 + (i << 20), 4096, 1);
  const std::vector<uint8_t> head = b.vec();
  for (uint64_t i = 4; i < 8; ++i) b.alloc(10 + i, 0x7f0000000000 + (i << 20), 4096, 1);
  b.end(100);
  const std::vector<uint8_t> all = b.vec();

  char path[] = "/tmp/cumemtrace-gap-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  constexpr uint64_t kStretch = 384ull << 20;
  REQUIRE(write(fd, head.data(), head.size()) == ssize_t(head.size()));
  const std::vector<uint8_t> block(1 << 20, 0xA5);
  for (uint64_t i = 0; i < kStretch / block.size(); ++i)
    REQUIRE(write(fd, block.data(), block.size()) == ssize_t(block.size()));
  REQUIRE(write(fd, all.data() + head.size(), all.size() - head.size()) == ssize_t(all.size() - head.size()));
  close(fd);

  const uint64_t before = peak_rss(true);
  {
    const TraceFile file(path);
    REQUIRE_FALSE(file.holds_events());  // read in passes
    const Report r = build_report(file.trace(), file.events(), ReportOptions{});
    CHECK_FALSE(file.changed());
    CHECK(file.events().size() == 8);  // the four on each side of the stretch
    REQUIRE(file.trace().damage.size() == 1);
    CHECK(file.trace().damage[0].byte_offset == head.size());
    CHECK(file.trace().damage[0].bytes == kStretch);
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].peak_bytes == 8 * 4096);
  }
  const uint64_t after = peak_rss(false);
  unlink(path);
  if (!before || !after) {
    WARN("no /proc/self/clear_refs or VmHWM here: the peak was not measured");
    return;
  }
  // Two 64 MiB search windows are held at most, plus the test's own small trace.
  CHECK(after - before < (192ull << 20));
}

TEST_CASE("a trace of format 1.1 (no chunks) read event by event gives its pages back as it goes") {
  TraceBuilder b(1);
  b.process().device(0, 1ull << 30);
  uint64_t n = 0;
  for (; b.bytes().size() < (80u << 20); ++n) b.alloc(10 + n, 0x7f0000000000 + (n << 12), 4096);
  char path[] = "/tmp/cumemtrace-legacy-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const std::string& bytes = b.bytes();
  REQUIRE(write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
  close(fd);
  {
    const MappedFile file(path);
    uint64_t seen = 0;
    const Trace t = parse_trace_events(
        file.bytes(), path, [&](const Event&) { ++seen; }, true, &file);
    CHECK_FALSE(t.error);
    CHECK(seen == n);
    // Given back up to a page boundary within the last 64 MiB step before the end.
    CHECK(file.released() >= (64u << 20));
    CHECK(file.released() <= bytes.size());
  }
  unlink(path);
}

namespace {

// Sets a file's modification time `seconds` after its current one: a write in place
// within the file system's timestamp tick would leave it unchanged, and a test must not
// depend on the tick.
void touch_later(const char* path, int seconds) {
  struct stat st;
  REQUIRE(stat(path, &st) == 0);
  timespec times[2] = {st.st_atim, st.st_mtim};
  times[1].tv_sec += seconds;
  REQUIRE(utimensat(AT_FDCWD, path, times, 0) == 0);
}

std::string write_temp(const std::vector<uint8_t>& bytes, const char* name) {
  std::string path = "/tmp/cumemtrace-" + std::string(name) + "-" + std::to_string(getpid());
  FILE* f = fopen(path.c_str(), "wb");
  REQUIRE(f);
  REQUIRE(fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  fclose(f);
  return path;
}

}  // namespace

TEST_CASE("a file written over in place (same size, later mtime) changed, one appended to did not") {
  const std::vector<uint8_t> bytes = small_trace_bytes();
  const std::string path = write_temp(bytes, "inplace");
  {
    const TraceFile file(path);
    CHECK_FALSE(file.changed());
    touch_later(path.c_str(), 0);  // the same time again: nothing changed
    CHECK_FALSE(file.changed());
    FILE* f = fopen(path.c_str(), "ab");
    REQUIRE(fputs("more", f) >= 0);  // appended: a trace still being written
    fclose(f);
    touch_later(path.c_str(), 5);
    CHECK_FALSE(file.changed());
  }
  {
    const TraceFile file(path);
    const int fd = open(path.c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    REQUIRE(pwrite(fd, "x", 1, 100) == 1);  // in place, the size unchanged
    close(fd);
    touch_later(path.c_str(), 5);
    CHECK(file.changed());
  }
  unlink(path.c_str());
}

TEST_CASE(
    "not_as_checked tells a file replaced, cut or written in place since its check, and one appended to is the same") {
  const std::vector<uint8_t> bytes = small_trace_bytes();
  const std::string path = write_temp(bytes, "checked");
  FileStamp checked;
  {
    const TraceFile file(path);
    checked = file.stamp();
    REQUIRE(checked.inode != 0);
    CHECK(checked.size == bytes.size());
  }
  const auto now = [&] { return not_as_checked(checked, TraceFile(path)); };
  CHECK(now() == "");
  {  // appended to: the same file, grown
    FILE* f = fopen(path.c_str(), "ab");
    REQUIRE(fputs("more", f) >= 0);
    fclose(f);
    touch_later(path.c_str(), 5);
    CHECK(now() == "");
  }
  const FileStamp grown = TraceFile(path).stamp();
  {  // written over in place
    const int fd = open(path.c_str(), O_WRONLY);
    REQUIRE(pwrite(fd, "x", 1, 100) == 1);
    close(fd);
    touch_later(path.c_str(), 5);
    checked = grown;
    CHECK(now().find("changed between its check and its reading (written over in place)") != std::string::npos);
  }
  checked = TraceFile(path).stamp();
  REQUIRE(truncate(path.c_str(), 64) == 0);
  CHECK(now().find("(cut short)") != std::string::npos);
  checked = TraceFile(path).stamp();
  const std::string other = write_temp(bytes, "other");
  REQUIRE(rename(other.c_str(), path.c_str()) == 0);
  CHECK(now().find("(another file under its name)") != std::string::npos);
  unlink(path.c_str());
}
