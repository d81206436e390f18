#include "cumemtrace/rules/address_map.h"

#include <algorithm>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

#include "catch.h"

using cumemtrace::AddressMap;

namespace {

std::vector<std::pair<uint64_t, uint64_t>> entries(const AddressMap<uint64_t>& m) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  m.for_each([&](uint64_t k, uint64_t v) { out.emplace_back(k, v); });
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<uint64_t, uint64_t>> entries(const std::unordered_map<uint64_t, uint64_t>& m) {
  std::vector<std::pair<uint64_t, uint64_t>> out(m.begin(), m.end());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("an empty address map finds nothing and erases nothing") {
  AddressMap<uint64_t> m;
  CHECK(m.size() == 0);
  CHECK(m.empty());
  CHECK(m.find(0x1000) == nullptr);
  CHECK(m.find(0) == nullptr);
  CHECK(m.find(~uint64_t(0)) == nullptr);
  CHECK_FALSE(m.erase(0x1000));
  int calls = 0;
  m.for_each([&](uint64_t, uint64_t) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("an address map stores, replaces and erases values by address") {
  AddressMap<uint64_t> m;
  m.insert_or_assign(0x7f0000000000, 1);
  m.insert_or_assign(0x7f0000200000, 2);
  REQUIRE(m.find(0x7f0000000000) != nullptr);
  CHECK(*m.find(0x7f0000000000) == 1);
  CHECK(*m.find(0x7f0000200000) == 2);
  CHECK(m.find(0x7f0000100000) == nullptr);
  m.insert_or_assign(0x7f0000000000, 10);  // same address again: replaced, not added
  CHECK(m.size() == 2);
  CHECK(*m.find(0x7f0000000000) == 10);
  CHECK(m.erase(0x7f0000000000));
  CHECK_FALSE(m.erase(0x7f0000000000));
  CHECK(m.find(0x7f0000000000) == nullptr);
  CHECK(*m.find(0x7f0000200000) == 2);
  CHECK(m.size() == 1);
}

TEST_CASE("address 0 and the all-ones address are ordinary keys of an address map") {
  // All-ones is the table's free-slot marker internally; a trace may still hold it.
  AddressMap<uint64_t> m;
  m.insert_or_assign(0, 5);
  m.insert_or_assign(~uint64_t(0), 6);
  m.insert_or_assign(0x200, 7);
  CHECK(m.size() == 3);
  CHECK(*m.find(0) == 5);
  CHECK(*m.find(~uint64_t(0)) == 6);
  CHECK(entries(m) == std::vector<std::pair<uint64_t, uint64_t>>{{0, 5}, {0x200, 7}, {~uint64_t(0), 6}});
  CHECK(m.erase(~uint64_t(0)));
  CHECK(m.find(~uint64_t(0)) == nullptr);
  CHECK(m.size() == 2);
  CHECK(m.erase(0));
  CHECK(m.size() == 1);
}

TEST_CASE("an address map keeps 100,000 aligned addresses apart through growth and erases") {
  // 2 MiB-aligned addresses: the low 21 bits are zero, so without mixing they would share slots.
  AddressMap<uint64_t> m;
  const uint64_t base = 0x7f0000000000, step = 2ull << 20;
  const uint64_t n = 100000;
  for (uint64_t i = 0; i < n; ++i) {
    m.insert_or_assign(base + i * step, i);
    // Erase every third address as the table grows around it.
    if (i % 3 == 2) CHECK(m.erase(base + (i - 1) * step));
  }
  // Every i with i % 3 == 1 was erased (1, 4, ..., 99,997: 33,333 of them) when i + 1 came.
  CHECK(m.size() == n - 33333);
  uint64_t found = 0, missing = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t* v = m.find(base + i * step);
    const bool erased = i % 3 == 1;
    if (erased) {
      missing += v == nullptr;
    } else {
      found += v != nullptr && *v == i;
    }
  }
  CHECK(found == n - 33333);
  CHECK(missing == 33333);
  size_t visited = 0;
  m.for_each([&](uint64_t, uint64_t) { ++visited; });
  CHECK(visited == m.size());
  for (uint64_t i = 0; i < n; ++i) m.erase(base + i * step);
  CHECK(m.size() == 0);
  CHECK(m.find(base) == nullptr);
}

TEST_CASE("an address map agrees with std::unordered_map over 100,000 random operations") {
  // Keys from a small pool of 512-aligned addresses, so inserts hit existing keys, erases hit
  // live ones, and runs of probes form and break; a few odd keys (0, all ones) among them.
  std::mt19937_64 rng(20261201);
  std::vector<uint64_t> pool;
  for (int i = 0; i < 4000; ++i) pool.push_back(0x7f4000000000 + uint64_t(rng() % 1000000) * 512);
  pool.push_back(0);
  pool.push_back(~uint64_t(0));
  AddressMap<uint64_t> m;
  std::unordered_map<uint64_t, uint64_t> ref;
  uint64_t mismatches = 0;
  for (uint64_t op = 0; op < 100000; ++op) {
    const uint64_t key = pool[rng() % pool.size()];
    // Inserts win 3:2 for the first half (growth), erases 3:2 for the second (shrinking runs).
    const bool insert = (rng() % 5) < (op < 50000 ? 3u : 2u);
    if (insert) {
      m.insert_or_assign(key, op);
      ref[key] = op;
    } else {
      const bool had = ref.erase(key) == 1;
      if (m.erase(key) != had) ++mismatches;
    }
    const uint64_t probe = pool[rng() % pool.size()];
    const uint64_t* got = m.find(probe);
    auto want = ref.find(probe);
    if ((got == nullptr) != (want == ref.end()) || (got && *got != want->second)) ++mismatches;
    if (m.size() != ref.size()) ++mismatches;
    if (op % 10000 == 9999) CHECK(entries(m) == entries(ref));
  }
  CHECK(mismatches == 0);
  CHECK(entries(m) == entries(ref));
}
