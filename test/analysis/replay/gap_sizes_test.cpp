#include "cumemtrace/rules/gap_sizes.h"

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
