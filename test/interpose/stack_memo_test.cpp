// Interning a stack from the previous one of the same thread (interpose/stacks/stack_memo.h)
// gives the id a full intern gives, for native and Python stacks that change at every
// depth, recurse, grow and shrink, and share memos between "threads".
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "stacks/python_tree.h"
#include "stacks/stack_tree.h"

using namespace cumemtrace::interpose;

namespace {

// A stack of `depth` frames, outermost first, each one of `choices` values; neighbours in
// the sequence share an outer part of random length.
std::vector<uint32_t> next_path(std::mt19937& rng, const std::vector<uint32_t>& previous, uint32_t max_depth,
                                uint32_t choices) {
  std::vector<uint32_t> p(previous.begin(), previous.begin() + long(rng() % (previous.size() + 1)));
  const uint32_t depth = rng() % (max_depth + 1);
  p.resize(std::min<size_t>(p.size(), depth));
  while (p.size() < depth) p.push_back(rng() % 4 == 0 && !p.empty() ? p.back() : rng() % choices);  // recursion
  return p;
}

std::string py_string(uint64_t p) { return "s" + std::to_string(p); }
// A line from every field the walk records but the names, so that a frame that differs
// in any one field gets a node of its own.
int32_t py_line(const PyRawFrame& f) {
  return int32_t(f.linetable % 16 * 10000 + uint64_t(f.firstlineno) * 1000 + f.version * 100 + f.code % 16 * 10) +
         f.offset / 4;  // two offsets per line
}

}  // namespace

TEST_CASE("stack memo: native stacks interned from the previous one equal a full intern's") {
  std::mt19937 rng(7);
  StackTree tree;
  std::vector<StackTree::Memo> memos(3);  // threads, one more than memos: some share
  std::vector<std::vector<uint32_t>> paths(4);
  std::string out;
  for (int i = 0; i < 20000; ++i) {
    const size_t thread = rng() % paths.size();
    paths[thread] = next_path(rng, paths[thread], 40, 5);
    RawStack s;
    s.count = uint32_t(paths[thread].size());
    for (uint32_t k = 0; k < s.count; ++k) s.ip[s.count - 1 - k] = 0x1000 + paths[thread][k];
    const uint32_t id = tree.intern(s, out, memos[thread % memos.size()]);
    REQUIRE(id == tree.intern(s, out));
    uint64_t frames[RawStack::kMax];
    REQUIRE(tree.frames(id, frames, RawStack::kMax) == s.count);
    for (uint32_t k = 0; k < s.count; ++k) REQUIRE(frames[k] == s.ip[k]);
  }
}

TEST_CASE("stack memo: Python stacks interned from the previous one equal a full intern's") {
  std::mt19937 rng(11);
  PyStackTree tree({py_string, py_line});
  std::vector<PyStackTree::Memo> memos(3);
  std::vector<std::vector<uint32_t>> paths(4);
  std::string out;
  for (int i = 0; i < 20000; ++i) {
    const size_t thread = rng() % paths.size();
    paths[thread] = next_path(rng, paths[thread], 30, 10);
    PyRawStack s;
    s.count = uint32_t(paths[thread].size());
    for (uint32_t k = 0; k < s.count; ++k) {
      // Frames that differ from one another in one field only (and offsets 0 and 2 on
      // one line): a comparison that skipped any field would reuse a wrong node.
      const uint32_t v = paths[thread][k];
      PyRawFrame& f = s.frames[s.count - 1 - k];
      f = {0x100, 0x200, 0x300, 0x400, 1, 0, 0, 0};
      if (v == 1) f.code += 8;
      if (v == 2) f.filename += 8;
      if (v == 3) f.name += 8;
      if (v == 4) f.linetable += 8;
      if (v == 5) f.firstlineno = 2;
      if (v == 6) f.offset = 4;
      if (v == 7) f.offset = 2;
      if (v == 8) f.version = 1;
      if (v == 9) f.entry = 1;
    }
    const uint32_t id = tree.intern(s, out, memos[thread % memos.size()]);
    REQUIRE(id == tree.intern(s, out));
  }
}
