// The symbolizer on this test executable itself (compiled with -g, see CMakeLists.txt):
// a return address taken inside a known function, its module described from
// dl_iterate_phdr exactly as the preload library does, must come back as that
// function's demangled name and the line of the call.
#include "symbols/symbolize.h"

#include <link.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "catch.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::TraceBuilder;

namespace symbolize_test_target {

int g_call_line = 0;

[[gnu::noinline]] uint64_t return_address() {
  asm volatile("");
  return reinterpret_cast<uint64_t>(__builtin_return_address(0));
}

[[gnu::noinline]] uint64_t known_function(int salt) {
  uint64_t ra = return_address();
  g_call_line = __LINE__ - 1;  // the line of the call above
  asm volatile("" : "+r"(ra));
  return ra + uint64_t(salt) * 0;
}

}  // namespace symbolize_test_target

namespace {

struct Self {
  uint64_t bias = 0, start = ~0ull, end = 0;
  std::string build_id;
};

int find_self(dl_phdr_info* info, size_t, void* data) {
  // The main executable is the first object and has an empty name.
  if (info->dlpi_name && info->dlpi_name[0]) return 0;
  auto* s = static_cast<Self*>(data);
  s->bias = info->dlpi_addr;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD) {
      s->start = std::min<uint64_t>(s->start, info->dlpi_addr + ph.p_vaddr);
      s->end = std::max<uint64_t>(s->end, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
    } else if (ph.p_type == PT_NOTE) {
      // NT_GNU_BUILD_ID, as the preload library records it.
      auto* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
      const char* end = p + ph.p_memsz;
      while (p + sizeof(ElfW(Nhdr)) <= end) {
        auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
        const char* name = p + sizeof *n;
        const char* desc = name + ((n->n_namesz + 3) & ~3u);
        if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && std::string(name, 3) == "GNU")
          s->build_id.assign(desc, n->n_descsz);
        p = desc + ((n->n_descsz + 3) & ~3u);
      }
    }
  }
  return 1;
}

std::string self_path() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

std::string temp_path(const char* tag) {
  return std::string("/tmp/cumemtrace-test-") + tag + "-" + std::to_string(getpid()) + ".trace";
}

}  // namespace

TEST_CASE("the symbolizer names a function of this executable and the line of a call in it") {
  const uint64_t ip = symbolize_test_target::known_function(1);
  Self self;
  dl_iterate_phdr(find_self, &self);
  REQUIRE(ip >= self.start);
  REQUIRE(ip < self.end);

  TraceBuilder b;
  b.process().module(self.bias, self.start, self.end, self_path(), self.build_id).stack(1, 0, ip);
  b.alloc(1, 0x1000, 64, 1);  // and no end record, as if the process had died ...
  const std::string path = temp_path("sym");
  {
    std::string bytes = b.bytes() + std::string("\x05\x00\x00", 3);  // ... mid-record
    std::ofstream(path, std::ios::binary) << bytes;
  }

  SymbolizeFileResult r = symbolize_file(path);
  REQUIRE(r.ok);
  CHECK(r.cut_partial);
  CHECK(r.appended == 1);
  CHECK(r.stats.modules_mismatch == 0);

  Trace t = read_trace(path);
  REQUIRE_FALSE(t.error);
  REQUIRE(t.symbols.count(ip));
  const Symbol& s = t.symbols.at(ip);
  CHECK(s.function == "symbolize_test_target::known_function(int)");
  CHECK(s.line == uint32_t(symbolize_test_target::g_call_line));
  CHECK(s.file.find("symbolize_test.cpp") != std::string::npos);
  CHECK(t.events.size() == 1);

  // Idempotent: a second run appends nothing.
  const auto size_before = t.records_end;
  SymbolizeFileResult again = symbolize_file(path);
  CHECK(again.ok);
  CHECK(again.already);
  CHECK(read_trace(path).records_end == size_before);
  std::remove(path.c_str());
}

TEST_CASE("a module whose build-id differs is not trusted") {
  const uint64_t ip = symbolize_test_target::known_function(2);
  Self self;
  dl_iterate_phdr(find_self, &self);
  REQUIRE_FALSE(self.build_id.empty());
  std::string wrong = self.build_id;
  wrong[0] = char(wrong[0] ^ 0xff);
  TraceBuilder b;
  b.process().module(self.bias, self.start, self.end, self_path(), wrong).stack(1, 0, ip);
  const auto& bytes = b.bytes();
  Trace t = parse_trace({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  SymbolizeStats stats;
  auto syms = resolve_symbols(t, &stats);
  CHECK(syms.empty());
  CHECK(stats.modules_mismatch == 1);
}

TEST_CASE("a missing module file is skipped") {
  TraceBuilder b;
  b.process().module(0, 0x1000, 0x2000, "/nonexistent/libgone.so").stack(1, 0, 0x1100);
  const auto& bytes = b.bytes();
  Trace t = parse_trace({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  SymbolizeStats stats;
  CHECK(resolve_symbols(t, &stats).empty());
  CHECK(stats.modules_missing == 1);
}

TEST_CASE("symbolize completes a symbol section cut short, and keeps records after damage in the middle") {
  const uint64_t ip = symbolize_test_target::known_function(2);
  const uint64_t ip2 = symbolize_test_target::return_address();
  Self self;
  dl_iterate_phdr(find_self, &self);

  // Format 1.1: a damaged record in the middle, sound records after it, and a symbol
  // section holding one of the two ips (a symbolizer killed halfway).
  TraceBuilder b(1);
  b.process().module(self.bias, self.start, self.end, self_path(), self.build_id).stack(1, 0, ip).stack(2, 1, ip2);
  const uint64_t damaged_at = b.bytes().size();
  b.alloc(1, 0x1000, 64, 1);
  for (int i = 0; i < 6; ++i) b.alloc(2 + i, 0x2000 + 0x100 * i, 64, 2);
  b.end(10).symbol(ip, "known", "x.cpp", 1);
  std::string bytes = b.bytes();
  bytes[damaged_at + 4] = char(0x70);  // the first event's length: 64 -> 112
  const std::string path = temp_path("symdamage");
  std::ofstream(path, std::ios::binary) << bytes;

  const Trace before = read_trace(path);
  REQUIRE(before.damage.size() == 1);
  CHECK(before.damage[0].byte_offset == damaged_at);
  CHECK(before.events.size() == 6);
  CHECK(before.symbol_records == 1);

  SymbolizeFileResult r = symbolize_file(path);
  REQUIRE(r.ok);
  CHECK_FALSE(r.already);
  CHECK(r.appended == 1);  // ip2 only: ip had its symbol
  const Trace after = read_trace(path);
  CHECK(after.events.size() == 6);
  CHECK(after.end);
  CHECK(after.symbol_records == 2);
  CHECK(after.symbols.at(ip).function == "known");  // kept, not replaced
  CHECK(after.symbols.count(ip2) == 1);
  REQUIRE(after.damage.size() == 1);
  CHECK(after.damage[0].byte_offset == damaged_at);

  SymbolizeFileResult again = symbolize_file(path);
  CHECK(again.already);
  std::remove(path.c_str());
}

TEST_CASE("symbols appended to a format 1.2 trace are sealed by a checksum") {
  const uint64_t ip = symbolize_test_target::known_function(3);
  Self self;
  dl_iterate_phdr(find_self, &self);
  TraceBuilder b;
  b.process().module(self.bias, self.start, self.end, self_path(), self.build_id).stack(1, 0, ip);
  b.alloc(1, 0x1000, 64, 1).end(2);
  const std::string path = temp_path("symsealed");
  std::ofstream(path, std::ios::binary) << b.bytes();
  const uint64_t chunks = read_trace(path).sealed_chunks;
  REQUIRE(symbolize_file(path).appended == 1);
  const Trace t = read_trace(path);
  CHECK(t.damage.empty());
  CHECK(t.sealed_chunks == chunks + 1);
  CHECK(t.symbols.count(ip) == 1);
  std::remove(path.c_str());
}
