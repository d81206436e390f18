// Writes the hostile traces of test/analysis/hostile_traces.h into a folder, for
// bench/run_hostile.sh to time the analysis on (docs/performance.md, "Analysis of hostile
// traces") and, small, as fuzz seeds (docs/fuzzing.md).
//   hostile_traces DIR [SCALE]   SCALE 1 (default): 20,000 pushes, 10,000 marks,
//                                100,000 tags, 20,000 heaps; each count times SCALE
#include <cstdio>
#include <cstdlib>
#include <string>

#include "hostile_traces.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: hostile_traces DIR [SCALE]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const double scale = argc > 2 ? std::atof(argv[2]) : 1.0;
  const auto n = [&](double count) { return uint64_t(count * scale); };
  using namespace cumemtrace::test;
  open_pushes(n(20000)).write(dir + "/hostile-open-pushes.trace");
  distinct_marks(n(10000)).write(dir + "/hostile-distinct-marks.trace");
  nested_tags(n(100000)).write(dir + "/hostile-nested-tags.trace");
  pool_heaps(n(20000)).write(dir + "/hostile-pool-heaps.trace");
  return 0;
}
