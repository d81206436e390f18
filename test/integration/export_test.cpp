// `cumemtrace export` on a real traced job (iterations.c under the simulated driver):
// the figures worked out in iterations.c's comment — 72,351,744 B live at the end,
// a peak of 80,740,352 B, 11 allocations and 5 frees — must come out of every format.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "harness.h"

using namespace harness;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The sum of the counts of folded lines, each checked to be "cuda:0;...main [iterations]... N".
uint64_t folded_sum(const std::string& text) {
  uint64_t sum = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    CHECK(line.rfind("cuda:0;", 0) == 0);
    CHECK(line.find("main [iterations]") != std::string::npos);
    sum += std::stoull(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

}  // namespace

TEST_CASE("export: a traced job's memviz snapshot, chrome timeline and folded stacks hold its figures") {
  TempDir dir;
  const Result r = run({cli(), "run", "-o", dir.path + "/t-%p.trace", "--", here("iterations")});
  REQUIRE(r.exit_code == 0);
  const auto traces = dir.files("t-");
  REQUIRE(traces.size() == 1);
  const std::string& trace = traces[0];

  Result f = run({cli(), "export", "--format", "folded", "--at", "end", trace});
  REQUIRE(f.exit_code == 0);
  CHECK(folded_sum(f.out) == 72351744);
  f = run({cli(), "export", "--format", "folded", trace});  // at the peak
  REQUIRE(f.exit_code == 0);
  CHECK(folded_sum(f.out) == 80740352);

  const std::string pickle = dir.path + "/snap.pickle";
  REQUIRE(run({cli(), "export", "--format", "memviz", trace, "-o", pickle}).exit_code == 0);
  const Result py =
      run({"/usr/bin/python3", std::string(CUMEMTRACE_SOURCE_DIR) + "/test/analysis/memviz_load.py", pickle});
  REQUIRE(py.exit_code == 0);
  const auto snap = nlohmann::json::parse(py.out)["snapshot"];
  uint64_t live = 0;
  for (const auto& s : snap["segments"]) live += s["total_size"].get<uint64_t>();
  CHECK(snap["segments"].size() == 6);  // 64 MiB and five 1 MiB
  CHECK(live == 72351744);
  std::map<std::string, int> actions;
  for (const auto& e : snap["device_traces"][0]) actions[e["action"].get<std::string>()] += 1;
  CHECK(actions ==
        std::map<std::string, int>{
            {"segment_alloc", 11}, {"alloc", 11}, {"free_requested", 5}, {"free_completed", 5}, {"segment_free", 5}});
  bool main_named = false;
  for (const auto& fr : snap["device_traces"][0][0]["frames"]) main_named |= fr["name"] == "main";
  CHECK(main_named);

  const std::string timeline = dir.path + "/timeline.json";
  REQUIRE(run({cli(), "export", "--format", "chrome", trace, "-o", timeline}).exit_code == 0);
  const auto events = nlohmann::json::parse(read_file(timeline));
  std::vector<uint64_t> tracked;
  for (const auto& e : events)
    if (e["name"] == "memory") tracked.push_back(e["args"]["tracked_bytes"].get<uint64_t>());
  // 0 at the device's first event (its context), then one per allocation and free.
  REQUIRE(tracked.size() == 17);
  CHECK(tracked.front() == 0);
  CHECK(*std::max_element(tracked.begin(), tracked.end()) == 80740352);
  CHECK(tracked.back() == 72351744);
}
