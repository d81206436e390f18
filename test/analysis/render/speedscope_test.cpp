// The speedscope export: speedscope's own JSON of the stacks folded finds live at a
// moment (docs/formats.md, "speedscope"), checked field by field and against folded.
#include "export_fixtures.h"
#include "render/export/speedscope.h"

using namespace cumemtrace::test::exports;

namespace {

FoldedStacks folded_stacks(const Trace& t, uint64_t at) {
  FoldedStacks stacks;
  stacks.add(t, MemoryEvents(t.events), at, false);
  return stacks;
}

json speedscope_at(const Trace& t, uint64_t at, uint64_t* total = nullptr) {
  std::ostringstream out;
  const uint64_t bytes = write_speedscope(out, folded_stacks(t, at), "t.trace");
  if (total) *total = bytes;
  return json::parse(out.str());
}

}  // namespace

TEST_CASE("speedscope: folded's stacks at the peak as one sampled profile in bytes, frames shared") {
  const Trace t = read_back(folded_trace());
  REQUIRE_FALSE(t.error);
  // At the peak (t=3000) folded has two lines, in this order (export_fixtures.h):
  //   kMine  = cuda:0;main;<module>;forward;my_alloc  1000 + 500 = 1500
  //   kOther = cuda:0;main;other,alloc                2000
  // The frame table, in order of first use: cuda:0 (no file), main (python.c:10), <module>
  // (train.py:5), forward (train.py:42), my_alloc (ext.c:20), then other;alloc (ext.c:30),
  // its ';' a ',' as in folded. Samples are root first; endValue 1500 + 2000 = 3500.
  uint64_t total = 0;
  const json got = speedscope_at(t, TraceBuilder::kStart + 3000, &total);
  const auto frame = [](const char* name, const char* file, int line) {
    return json{{"name", name}, {"file", file}, {"line", line}};
  };
  const json want = {
      {"$schema", "https://www.speedscope.app/file-format-schema.json"},
      {"shared",
       {{"frames", json::array({{{"name", "cuda:0"}},
                                frame("main [python3.12]", "python.c", 10),
                                frame("<module> (train.py:5)", "train.py", 5),
                                frame("forward (train.py:42)", "train.py", 42),
                                frame("my_alloc [python3.12]", "ext.c", 20),
                                frame("other,alloc [python3.12]", "ext.c", 30)})}}},
      {"profiles", json::array({{{"type", "sampled"},
                                 {"name", "t.trace"},
                                 {"unit", "bytes"},
                                 {"startValue", 0},
                                 {"endValue", 3500},
                                 {"samples", json::array({json::array({0, 1, 2, 3, 4}), json::array({0, 1, 5})})},
                                 {"weights", json::array({1500, 2000})}}})},
      {"name", "t.trace"},
      {"activeProfileIndex", 0},
      {"exporter", "cumemtrace"}};
  CHECK(got == want);
  CHECK(total == 3500);
}

TEST_CASE("speedscope: at any moment, each sample is folded's line and the weights sum to folded's bytes") {
  const Trace t = read_back(folded_trace());
  REQUIRE_FALSE(t.error);
  // The moments folded's test takes: t=1500 (1000 B), the peak (3500 B), the end (100 B
  // without a stack + 1500 B).
  for (const auto& [at, bytes] : {std::pair<uint64_t, uint64_t>{1500, 1000}, {3000, 3500}, {6000, 1600}}) {
    INFO(at);
    const std::string folded = folded_at(t, TraceBuilder::kStart + at);
    const json got = speedscope_at(t, TraceBuilder::kStart + at);
    const json& p = got["profiles"][0];
    std::string lines;
    uint64_t sum = 0;
    for (size_t i = 0; i < p["samples"].size(); ++i) {
      std::string line;
      for (const json& f : p["samples"][i])
        line += (line.empty() ? "" : ";") + got["shared"]["frames"][f.get<size_t>()]["name"].get<std::string>();
      lines += line + " " + std::to_string(p["weights"][i].get<uint64_t>()) + "\n";
      sum += p["weights"][i].get<uint64_t>();
    }
    CHECK(lines == folded);
    CHECK(sum == bytes);
    CHECK(p["endValue"] == bytes);
  }
  // At the end the stackless allocation is the frame "[no stack]", with no file or line.
  const json end = speedscope_at(t, TraceBuilder::kStart + 6000);
  CHECK(end["shared"]["frames"][1] == json{{"name", "[no stack]"}});
  CHECK(end["profiles"][0]["samples"][0] == json::array({0, 1}));
}

TEST_CASE("speedscope: the export command writes it with folded's --at and names the profile by its traces") {
  const std::string path = tmp_path("speedscope.trace");
  folded_trace().write(path);
  const std::string cli = std::string(CUMEMTRACE_CLI) + " export --format speedscope ";
  auto r = test::shell(cli + "--at end " + path + " 2>&1 >/dev/null");
  CHECK(r.status == 0);
  // 100 B without a stack and 1500 B at my_alloc are live at the end.
  CHECK(r.out == "cumemtrace export: 1600 live bytes in a speedscope profile to stdout\n");
  r = test::shell(cli + "--at end " + path + " 2>/dev/null");
  const Trace t = read_back(folded_trace());
  std::ostringstream want;
  write_speedscope(want, folded_stacks(t, TraceBuilder::kStart + 6000), path);
  CHECK(r.out == want.str());
  // With no --at, the peak, as folded.
  CHECK(json::parse(test::shell(cli + path + " 2>/dev/null").out)["profiles"][0]["endValue"] == 3500);
  std::remove(path.c_str());
}
