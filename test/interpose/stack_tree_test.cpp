// The native stacks' prefix tree (interpose/stacks/stack_tree.h): ids, the records it writes,
// and that its whole-stack cache never answers for a different stack.
#include "stacks/stack_tree.h"

#include <cstring>
#include <initializer_list>

#include <cumemtrace/trace_format.h>

#include <catch2/catch.hpp>

using namespace cumemtrace::interpose;

namespace {

RawStack stack_of(std::initializer_list<uint64_t> innermost_first) {
  RawStack s;
  s.count = 0;
  for (uint64_t ip : innermost_first) s.ip[s.count++] = ip;
  return s;
}

size_t node_records(const std::string& out) {
  return out.size() / (sizeof(cumemtrace::format::RecordHeader) + sizeof(cumemtrace::format::StackNodeRecord));
}

}  // namespace

TEST_CASE("stack tree: shared callers share nodes, and a stack seen again writes nothing") {
  StackTree t;
  std::string out;
  // main(0x10) -> f(0x20) -> alloc(0x30); main -> g(0x40) -> alloc(0x30)
  const uint32_t a = t.intern(stack_of({0x30, 0x20, 0x10}), out);
  CHECK(a == 3);
  CHECK(node_records(out) == 3);
  const uint32_t b = t.intern(stack_of({0x30, 0x40, 0x10}), out);
  CHECK(b == 5);  // main is shared: two new nodes, 4 (g) and 5
  CHECK(node_records(out) == 5);
  out.clear();
  CHECK(t.intern(stack_of({0x30, 0x20, 0x10}), out) == a);
  CHECK(t.intern(stack_of({0x30, 0x40, 0x10}), out) == b);
  CHECK(out.empty());
  CHECK(t.intern(stack_of({}), out) == 0);
  uint64_t ips[8];
  REQUIRE(t.frames(b, ips, 8) == 3);
  CHECK((ips[0] == 0x30 && ips[1] == 0x40 && ips[2] == 0x10));
}

TEST_CASE("stack tree: a stack that is a prefix or an extension of a cached one gets its own id") {
  StackTree t;
  std::string out;
  const uint32_t full = t.intern(stack_of({0x30, 0x20, 0x10}), out);
  // The caller's part alone (f called from main, 2 frames) is node 2, not the cached 3.
  CHECK(t.recent(stack_of({0x20, 0x10})) == 0);
  CHECK(t.intern(stack_of({0x20, 0x10}), out) == 2);
  // One frame deeper is a new node under 3.
  CHECK(t.intern(stack_of({0x50, 0x30, 0x20, 0x10}), out) == 4);
  CHECK(t.recent(stack_of({0x30, 0x20, 0x10})) == full);
  // Many stacks: every cached answer equals the one the tree walk gives.
  for (uint64_t i = 1; i <= 20000; ++i) {
    const RawStack s = stack_of({0x1000 + i % 97, 0x2000 + i % 13, 0x10});
    const uint32_t cached = t.recent(s);
    const uint32_t id = t.intern(s, out);
    if (cached) CHECK(cached == id);
    uint64_t ips[4];
    REQUIRE(t.frames(id, ips, 4) == 3);
    CHECK(ips[0] == 0x1000 + i % 97);
  }
}
