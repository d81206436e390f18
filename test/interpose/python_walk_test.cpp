// The Python frame reader (interpose/stacks/python_walk.h) on frames built by hand in 3.12's
// layout: it finds what a real chain holds, and a corrupted chain gives no frames and
// no crash.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "stacks/python_layout.h"
#include "fake_memory.h"
#include "stacks/python_walk.h"

using namespace cumemtrace::interpose;

namespace {

// co_linetable and co_lines() of this function, printed by Debian's python3 (3.11.2):
//   def sample(a, b):            # line 2
//       x = a + b
//       if x > 3:
//           y = [i for i in range(x)]
//       else:
//           y = None
//
//       return (x,
//               y)
const std::vector<uint8_t> kTable = {128, 0,   216, 8,   9,   136, 65,  137, 5,  128, 65, 216, 7,   8,   136, 49,  130,
                                     117, 128, 117, 216, 12,  33,  208, 12,  33, 157, 5,  152, 97,  153, 8,   156, 8,
                                     208, 12,  33,  209, 12,  33,  212, 12,  33, 136, 1,  136, 1,   224, 12,  16,  136,
                                     1,   224, 12,  13,  216, 12,  13,  240, 3,  1,   12, 15,  240, 0,   1,   5,   15};
struct Range {
  int start, end, line;
};
const std::vector<Range> kLines = {{0, 2, 2},   {2, 4, 3},   {4, 6, 3},   {6, 10, 3},  {10, 12, 3}, {12, 14, 4},
                                   {14, 16, 4}, {16, 22, 4}, {22, 24, 4}, {24, 26, 5}, {26, 28, 5}, {28, 40, 5},
                                   {40, 42, 5}, {42, 46, 5}, {46, 56, 5}, {56, 58, 5}, {58, 62, 5}, {62, 72, 5},
                                   {72, 74, 5}, {74, 76, 5}, {76, 78, 7}, {78, 80, 7}, {80, 82, 9}, {82, 84, 10},
                                   {84, 86, 9}, {86, 88, 9}};

// Objects in 3.12's layout, each in its own heap block (8-byte aligned by new).
struct FakePython {
  PyLayout l;
  std::vector<uint8_t> code_type = std::vector<uint8_t>(64), str_type = std::vector<uint8_t>(64),
                       bytes_type = std::vector<uint8_t>(64);
  std::vector<std::vector<uint8_t>> objects;  // strings, tables, code objects
  std::vector<std::vector<uint8_t>> frames;   // innermost first
  uint32_t next_version = 900;                // co_version, as CPython's counter gives it
  PyTypes types() const { return {0, addr(code_type), addr(str_type), addr(bytes_type)}; }

  FakePython() { REQUIRE(builtin_layout(0x030C01F0, l)); }

  uint64_t str(const std::string& s) {
    auto& o = objects.emplace_back(l.unicode_ascii_bytes + s.size() + 1);
    put(o, l.ob_type, addr(str_type));
    put(o, l.unicode_length, int64_t(s.size()));
    put(o, l.unicode_state, uint32_t(1 << 2 | 1 << 5 | 1 << 6));  // kind 1, compact, ascii
    std::memcpy(o.data() + l.unicode_ascii_bytes, s.data(), s.size());
    return addr(o);
  }
  uint64_t table() {
    auto& o = objects.emplace_back(l.bytes_data + kTable.size() + 1);
    put(o, l.ob_type, addr(bytes_type));
    put(o, l.bytes_size, int64_t(kTable.size()));
    std::memcpy(o.data() + l.bytes_data, kTable.data(), kTable.size());
    return addr(o);
  }
  uint64_t code(const std::string& file, const std::string& name) {
    const uint64_t f = str(file), n = str(name), t = table();
    auto& o = objects.emplace_back(l.code_adaptive + 128);
    put(o, l.ob_type, addr(code_type));
    put(o, l.code_filename, f);
    put(o, l.code_name, n);
    put(o, l.code_linetable, t);
    put(o, l.code_firstlineno, int32_t(2));
    put(o, uint64_t(l.code_version), next_version++);
    return addr(o);
  }
  // Appends a frame outside the previous one (frames are added innermost first).
  void frame(uint64_t code, int offset, uint8_t owner = 0) {
    auto& f = frames.emplace_back(128);
    put(f, l.frame_code, code);
    put(f, l.frame_instr, code + l.code_adaptive + uint64_t(offset));
    f[l.frame_owner] = owner;
    if (frames.size() > 1) put(frames[frames.size() - 2], l.frame_previous, addr(f));
  }
  uint64_t innermost() const { return addr(frames.front()); }
};

// inner() at offset 82 (line 10), under a shim, run by outer() at offset 24 (line 5),
// which runs inside main() at offset 76 (line 7) in the same evaluation loop, under the
// outermost shim.
FakePython three_frames() {
  FakePython p;
  const uint64_t inner = p.code("/w/train.py", "inner"), outer = p.code("/w/train.py", "outer"),
                 main = p.code("/w/main.py", "main");
  p.frame(inner, 82);
  p.frame(inner, 0, 3);  // FRAME_OWNED_BY_CSTACK
  p.frame(outer, 24);
  p.frame(main, 76);
  p.frame(main, 0, 3);
  return p;
}

std::string name_of(const FakePython& p, uint64_t s) {
  char buf[64];
  const int n = read_str(p.l, p.types(), s, buf, sizeof buf);
  return n < 0 ? "<unreadable>" : std::string(buf, size_t(n));
}

}  // namespace

TEST_CASE("the location table gives the line CPython's co_lines() gives, at every instruction") {
  for (const Range& r : kLines) {
    for (int offset = r.start; offset < r.end; offset += 2) {
      INFO("offset " << offset);
      CHECK(line_from_location_table(kTable.data(), kTable.size(), 2, offset) == r.line);
    }
  }
  CHECK(line_from_location_table(kTable.data(), kTable.size(), 2, 88) == -1);  // past the end
  CHECK(line_from_location_table(kTable.data(), kTable.size(), 2, -2) == 2);   // not started
  const uint8_t not_a_table[] = {0x01, 0x02};
  CHECK(line_from_location_table(not_a_table, sizeof not_a_table, 2, 0) == -1);
}

TEST_CASE("3.10's line table gives the line CPython 3.10's co_lines() gives") {
  // The same function's co_linetable and co_lines() under pyenv's 3.10.13.
  const uint8_t table[] = {8, 1, 8, 1, 18, 1, 2, 4, 2, 1, 4, 255, 4, 254, 2, 2, 2, 1, 4, 255};
  const std::vector<Range> lines = {{0, 8, 3},   {8, 16, 4},  {16, 34, 5}, {34, 36, 9},  {36, 38, 10},
                                    {38, 42, 9}, {42, 46, 7}, {46, 48, 9}, {48, 50, 10}, {50, 54, 9}};
  for (const Range& r : lines)
    for (int offset = r.start; offset < r.end; offset += 2) {
      INFO("offset " << offset);
      CHECK(line_from_310_table(table, sizeof table, 2, offset) == r.line);
    }
  CHECK(line_from_310_table(table, sizeof table, 2, 54) == -1);
  const uint8_t no_line[] = {4, 0x80};
  CHECK(line_from_310_table(no_line, sizeof no_line, 2, 2) == -1);
}

TEST_CASE("a 3.12 frame chain gives its frames innermost first, entry frames marked, with lines and names") {
  FakePython p = three_frames();
  PyRawStack s;
  REQUIRE(walk_frames(p.l, p.types(), p.innermost(), s));
  REQUIRE(s.count == 3);
  CHECK_FALSE(s.truncated);
  const std::vector<std::string> names = {"inner", "outer", "main"};
  const std::vector<int> lines = {10, 5, 7}, offsets = {82, 24, 76};
  const std::vector<bool> entries = {true, false, true};
  const std::vector<uint32_t> versions = {900, 901, 902};  // inner, outer, main: made in that order
  for (uint32_t i = 0; i < 3; ++i) {
    INFO("frame " << i);
    CHECK(s.frames[i].version == versions[i]);
    CHECK(name_of(p, s.frames[i].name) == names[i]);
    CHECK(s.frames[i].offset == offsets[i]);
    CHECK(read_line(p.l, p.types(), s.frames[i]) == lines[i]);
    CHECK(s.frames[i].entry == entries[i]);
  }
  CHECK(name_of(p, s.frames[0].filename) == "/w/train.py");
  CHECK(name_of(p, s.frames[2].filename) == "/w/main.py");
}

TEST_CASE("a corrupted frame chain gives no Python frames") {
  SECTION("a code object of another type") {
    FakePython p = three_frames();
    put(p.objects[2 * 4 + 3], p.l.ob_type, addr(p.str_type));  // main's code object (objects: 4 per code)
    PyRawStack s;
    CHECK_FALSE(walk_frames(p.l, p.types(), p.innermost(), s));
    CHECK(s.count == 0);
  }
  SECTION("a previous pointer into unmapped memory") {
    FakePython p = three_frames();
    put(p.frames[2], p.l.frame_previous, uint64_t(0x10000));
    PyRawStack s;
    CHECK_FALSE(walk_frames(p.l, p.types(), p.innermost(), s));
    CHECK(s.count == 0);
  }
  SECTION("a cycle") {
    FakePython p = three_frames();
    put(p.frames[3], p.l.frame_previous, addr(p.frames[0]));
    PyRawStack s;
    CHECK_FALSE(walk_frames(p.l, p.types(), p.innermost(), s));
    CHECK(s.count == 0);
  }
  SECTION("a misaligned frame") {
    FakePython p = three_frames();
    PyRawStack s;
    CHECK_FALSE(walk_frames(p.l, p.types(), p.innermost() + 1, s));
    CHECK(s.count == 0);
  }
}

TEST_CASE("random damage to frames, code objects, names and tables never crashes the reader") {
  std::mt19937_64 rng(9);
  // Values a torn pointer might hold: unmapped, kernel, misaligned, another object, random.
  FakePython base = three_frames();
  const std::vector<uint64_t> values = {0,
                                        1,
                                        0x10000,
                                        0xffff800000000000ull,
                                        base.innermost() + 3,
                                        addr(base.frames[1]),
                                        addr(base.objects[0]),
                                        ~0ull,
                                        0x7fffffffe000ull};
  int walked = 0;
  for (int round = 0; round < 3000; ++round) {
    FakePython p = three_frames();
    std::vector<std::vector<uint8_t>*> targets;
    for (auto& f : p.frames) targets.push_back(&f);
    for (auto& o : p.objects) targets.push_back(&o);
    for (int k = 0; k < 3; ++k) {
      auto& t = *targets[rng() % targets.size()];
      const uint64_t off = (rng() % (t.size() / 8)) * 8;
      put(t, off, rng() % 2 ? values[rng() % values.size()] : uint64_t(rng()));
    }
    PyRawStack s;
    if (walk_frames(p.l, p.types(), p.innermost(), s)) ++walked;
    REQUIRE(s.count <= 6);  // at most ours and the other chain's
    for (uint32_t i = 0; i < s.count; ++i) {
      char buf[128];
      read_line(p.l, p.types(), s.frames[i]);
      CHECK(read_str(p.l, p.types(), s.frames[i].filename, buf, sizeof buf) <= int(sizeof buf));
      CHECK(read_str(p.l, p.types(), s.frames[i].name, buf, sizeof buf) <= int(sizeof buf));
    }
  }
  CHECK(walked > 0);  // some damage leaves the chain readable (e.g. in a name's padding)
}
