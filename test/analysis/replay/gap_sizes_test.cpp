#include "cumemtrace/rules/gap_sizes.h"

#include <map>
#include <random>

#include "catch.h"

using cumemtrace::GapSizes;

TEST_CASE("gap sizes: the largest is the biggest size that still has a gap") {
  GapSizes g;
  CHECK(g.largest() == 0);
  g.add(5);
  g.add(9);
  g.add(9);
  CHECK(g.largest() == 9);
  g.remove(9);
  CHECK(g.largest() == 9);  // one gap of 9 is left
  g.remove(9);
  CHECK(g.largest() == 5);
  g.remove(7);  // no gap of that size: nothing changes
  CHECK(g.largest() == 5);
  g.remove(5);
  CHECK(g.largest() == 0);
}

TEST_CASE("gap sizes: sizes that come and go many times leave the right largest") {
  GapSizes g;
  g.add(3);
  // 100,000 sizes above 3, each added and removed twice: every one of them goes stale in
  // the heap, which is rebuilt along the way; 3 stays the only size with a gap.
  for (uint64_t round = 0; round < 2; ++round)
    for (uint64_t s = 4; s < 100'004; ++s) {
      g.add(s);
      if (s % 2 == 0) g.remove(s);
    }
  CHECK(g.largest() == 100'003);  // odd sizes were removed in neither round: 2 gaps each
  for (uint64_t s = 5; s < 100'004; s += 2) {
    g.remove(s);
    g.remove(s);
  }
  CHECK(g.largest() == 3);
  g.remove(3);
  CHECK(g.largest() == 0);
}

TEST_CASE("gap sizes: a size whose last gap goes and comes back below the top counts from zero again") {
  GapSizes g;
  g.add(10);
  g.add(5);
  g.remove(5);  // 5 has no gap now; 10 is still the largest
  CHECK(g.largest() == 10);
  g.remove(5);  // none to remove: left alone, not taken below zero
  g.add(5);     // one gap of 5 again
  g.remove(10);
  CHECK(g.largest() == 5);
  g.add(5);
  g.remove(5);
  CHECK(g.largest() == 5);  // two were there, one is left
  g.remove(5);
  CHECK(g.largest() == 0);
  g.add(7);  // after every size went: a fresh start
  CHECK(g.largest() == 7);
}

TEST_CASE("gap sizes: the largest equals a sorted count's after every add and remove of a random churn") {
  // 200,000 operations over 1,000 sizes, a remove a little likelier than an add (many of
  // a size with no gap, which must change nothing), so that sizes hover about one gap:
  // they lose their last and get one back below the top, at the top, and across rebuilds.
  // The reference is a std::map of counts.
  GapSizes g;
  std::map<uint64_t, uint64_t> counts;
  std::mt19937_64 rng(40);
  size_t mismatches = 0;
  for (int i = 0; i < 200'000; ++i) {
    const uint64_t size = 1 + rng() % 1000;
    if (rng() % 100 < 45) {
      g.add(size);
      ++counts[size];
    } else {
      g.remove(size);
      if (auto it = counts.find(size); it != counts.end() && --it->second == 0) counts.erase(it);
    }
    const uint64_t want = counts.empty() ? 0 : counts.rbegin()->first;
    if (g.largest() != want) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("gap sizes: sizes with no gaps left below the top are dropped by a rebuild and counted anew after it") {
  GapSizes g;
  g.add(10'000);
  for (uint64_t s = 1; s <= 1'000; ++s) g.add(s);
  for (uint64_t s = 1; s <= 1'000; ++s) g.remove(s);  // each loses its last gap below the top
  CHECK(g.largest() == 10'000);
  // A new size: 1,002 sizes kept against 2 with gaps, past twice those and 64: rebuilt.
  g.add(20'000);
  CHECK(g.largest() == 20'000);
  g.remove(20'000);
  CHECK(g.largest() == 10'000);
  g.add(500);  // dropped by the rebuild: one gap again
  g.remove(10'000);
  CHECK(g.largest() == 500);
  g.remove(500);
  g.remove(500);  // none left: nothing changes
  CHECK(g.largest() == 0);
}
