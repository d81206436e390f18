// The recent stacks kept whole (interpose/stacks/stack_pair_cache.h) give the ids the trees
// gave for exactly the frames kept, and nothing for frames that differ in any byte.
#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "stacks/python_tree.h"
#include "stacks/stack_pair_cache.h"
#include "stacks/stack_tree.h"

using namespace cumemtrace::interpose;

namespace {

std::string pair_py_string(uint64_t p) { return "s" + std::to_string(p); }
int32_t pair_py_line(const PyRawFrame& f) { return int32_t(f.firstlineno) + f.offset / 2; }

// A native stack of `n` frames and a Python one of `m`, every frame a function of `seed`.
void make(uint32_t seed, uint32_t n, uint32_t m, RawStack& native, PyRawStack& python) {
  native.count = n;
  for (uint32_t k = 0; k < n; ++k) native.ip[k] = 0x400000 + 16 * ((seed >> (k % 8)) & 3) + 64 * k;
  python.count = m;
  for (uint32_t k = 0; k < m; ++k)
    python.frames[k] = {0x1000 + 8 * ((seed >> (k % 5)) & 1), 0x2000, 0x3000, 0x4000, 1, int32_t(2 * k), 0, 0};
}

}  // namespace

TEST_CASE("stack pair cache: a kept pair is found with its ids, a pair differing in one byte is not") {
  StackPairCache cache;
  RawStack n;
  PyRawStack p;
  make(5, 10, 4, n, p);
  const uint64_t h = StackPairCache::hash(n, p);
  StackPairCache::Ids got{};
  CHECK_FALSE(cache.find(h, n, p, got));  // nothing kept yet
  cache.keep(h, n, p, {7, 9});
  REQUIRE(cache.find(h, n, p, got));
  CHECK(got.native == 7);
  CHECK(got.python == 9);
  SECTION("another return address") {
    n.ip[3] += 1;
    CHECK_FALSE(cache.find(StackPairCache::hash(n, p), n, p, got));
  }
  SECTION("a Python frame's entry flag, which the hash leaves out") {
    p.frames[2].entry = 1;
    CHECK(StackPairCache::hash(n, p) == h);  // the same slot: only the comparison tells them apart
    CHECK_FALSE(cache.find(h, n, p, got));
  }
  SECTION("one frame fewer") {
    n.count = 9;
    CHECK_FALSE(cache.find(StackPairCache::hash(n, p), n, p, got));
  }
  SECTION("a stack longer than an entry holds is never kept") {
    make(5, StackPairCache::kNative + 1, 4, n, p);
    const uint64_t h2 = StackPairCache::hash(n, p);
    cache.keep(h2, n, p, {1, 2});
    CHECK_FALSE(cache.find(h2, n, p, got));
  }
}

TEST_CASE("stack pair cache: over random stacks, every pair found has the ids a full intern gives") {
  std::mt19937 rng(3);
  StackTree natives;
  PyStackTree pythons({pair_py_string, pair_py_line});
  StackPairCache cache;
  std::string out;
  int found = 0;
  for (int i = 0; i < 20000; ++i) {
    // 400 distinct pairs over 128 slots: hits, misses and replaced slots all happen.
    const uint32_t seed = rng() % 400;
    RawStack n;
    PyRawStack p;
    make(seed, 1 + seed % 32, seed % 33, n, p);
    const uint32_t native = natives.intern(n, out);
    const uint32_t python = p.count ? pythons.intern(p, out) : 0;
    const uint64_t h = StackPairCache::hash(n, p);
    StackPairCache::Ids got{};
    if (cache.find(h, n, p, got)) {
      ++found;
      REQUIRE(got.native == native);
      REQUIRE(got.python == python);
    } else {
      cache.keep(h, n, p, {native, python});
    }
  }
  CHECK(found > 1000);  // the cache is used, not only filled
}
