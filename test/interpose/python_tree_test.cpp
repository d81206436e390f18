// PyStackTree (interpose/stacks/python_tree.h) with a reader of its own: what it writes for a
// code object whose address another code object took after the first was freed, as
// exec or compile in a loop does (the name objects' addresses reused in step).
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <cumemtrace/trace_format.h>

#include "stacks/python_tree.h"

using namespace cumemtrace;
using namespace cumemtrace::interpose;

namespace {

// What the fake process holds at each str address, and how often the tree read it.
std::map<uint64_t, std::string> g_strings;
int g_reads = 0;
std::string fake_string(uint64_t p) {
  ++g_reads;
  auto it = g_strings.find(p);
  return it == g_strings.end() ? "?" : it->second;
}
int32_t fake_line(const PyRawFrame& f) { return f.offset / 2 + 1; }

struct Written {
  std::vector<std::string> strings;           // PyStringRecords, in order
  std::vector<format::PyFrameRecord> frames;  // PyFrameRecords, in order
  std::map<uint32_t, std::string> by_id;
};
Written parse(const std::string& out) {
  Written w;
  for (size_t at = 0; at + sizeof(format::RecordHeader) <= out.size();) {
    format::RecordHeader h;
    std::memcpy(&h, out.data() + at, sizeof h);
    const char* body = out.data() + at + sizeof h;
    if (h.type == uint16_t(format::RecordType::kPyString)) {
      format::PyStringRecord r;
      std::memcpy(&r, body, sizeof r);
      uint32_t n;  // a string is its length (u32) and its bytes
      std::memcpy(&n, body + sizeof r, 4);
      w.strings.emplace_back(body + sizeof r + 4, n);
      w.by_id[r.id] = w.strings.back();
    } else if (h.type == uint16_t(format::RecordType::kPyFrame)) {
      format::PyFrameRecord r;
      std::memcpy(&r, body, sizeof r);
      w.frames.push_back(r);
    }
    at += sizeof h + h.payload_bytes;
  }
  return w;
}

// One frame of generated code: the same addresses every time, as the allocator gives them.
PyRawStack generated(uint32_t version) {
  PyRawStack s;
  s.count = 1;
  s.frames[0] = {0x7f0000001000, 0x7f0000002000, 0x7f0000003000, 0x7f0000004000, 1, 20, version, true};
  return s;
}

}  // namespace

TEST_CASE("a code object at a freed one's address, with a new co_version, gets its own names") {
  g_strings = {{0x7f0000002000, "gen_0.py"}, {0x7f0000003000, "<module>"}};
  g_reads = 0;
  PyStackTree tree({fake_string, fake_line});
  std::string out;
  const uint32_t first = tree.intern(generated(900), out);
  Written w = parse(out);
  CHECK(w.strings == std::vector<std::string>{"gen_0.py", "<module>"});
  REQUIRE(w.frames.size() == 1);
  CHECK(w.frames[0].id == first);
  CHECK(w.by_id[w.frames[0].file] == "gen_0.py");
  CHECK(w.frames[0].line == 11);
  CHECK(g_reads == 2);

  // The same code object again: nothing read, nothing written.
  out.clear();
  CHECK(tree.intern(generated(900), out) == first);
  CHECK(out.empty());
  CHECK(g_reads == 2);

  // gen_0's code freed; gen_1's code, its file name and its function name at the same
  // addresses. Only co_version differs.
  g_strings[0x7f0000002000] = "gen_1.py";
  out.clear();
  const uint32_t second = tree.intern(generated(901), out);
  CHECK(second != first);
  w = parse(out);
  CHECK(w.strings == std::vector<std::string>{"gen_1.py"});  // "<module>" was written before
  REQUIRE(w.frames.size() == 1);
  CHECK(w.frames[0].id == second);
  CHECK(w.frames[0].parent == 0);
  CHECK(w.frames[0].line == 11);
  CHECK(w.frames[0].function == 2u);  // "<module>": the second string ever written
  CHECK(w.frames[0].file == 3u);
  CHECK(w.by_id[3] == "gen_1.py");
  CHECK(g_reads == 4);
}

TEST_CASE("an interned Python stack's frames come back innermost first, as its records name them") {
  // main (train.py) calls step (train.py) calls alloc (mem.py); then step calls alloc from
  // another line: two stacks sharing their two outer frames.
  g_strings = {{0xa1, "train.py"}, {0xa2, "main"}, {0xa3, "step"}, {0xb1, "mem.py"}, {0xb2, "alloc"}};
  PyStackTree tree({fake_string, fake_line});
  std::string out;
  PyRawStack s;
  s.count = 3;                                               // innermost first; fake_line gives offset / 2 + 1
  s.frames[0] = {0x1003, 0xb1, 0xb2, 0x2003, 1, 8, 0, 0};    // alloc, line 5
  s.frames[1] = {0x1002, 0xa1, 0xa3, 0x2002, 1, 40, 0, 0};   // step, line 21
  s.frames[2] = {0x1001, 0xa1, 0xa2, 0x2001, 1, 100, 0, 1};  // main, line 51
  const uint32_t first = tree.intern(s, out);
  s.frames[1].offset = 44;  // step, line 23
  const uint32_t second = tree.intern(s, out);
  REQUIRE(first != second);

  const auto text = [](const std::vector<PyStackTree::Frame>& fs) {
    std::vector<std::string> t;
    for (const auto& f : fs) t.push_back(*f.file + ":" + std::to_string(f.line) + ":" + *f.function);
    return t;
  };
  CHECK(text(tree.frames(first, 16)) ==
        std::vector<std::string>{"mem.py:5:alloc", "train.py:21:step", "train.py:51:main"});
  CHECK(text(tree.frames(second, 16)) ==
        std::vector<std::string>{"mem.py:5:alloc", "train.py:23:step", "train.py:51:main"});
  CHECK(text(tree.frames(second, 2)) == std::vector<std::string>{"mem.py:5:alloc", "train.py:23:step"});
  CHECK(tree.frames(0, 16).empty());
  CHECK(tree.frames(second + 100, 16).empty());  // an id it never gave
}
