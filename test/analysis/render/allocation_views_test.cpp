// The page's views of `report --view` (render/page/allocation_views.h), as `html` embeds
// them (html_data's "allocations"), on the trace of three_sites.h, whose figures the text
// views print (cli/views_test.cpp).
#include <string>

#include "catch.h"
#include "parse_built.h"
#include "read/event_source.h"
#include "render/page/allocation_views.h"
#include "render/page/html_data.h"
#include "reports/report.h"
#include "sizes.h"
#include "stacks/stacks.h"
#include "three_sites.h"

using namespace cumemtrace;
using cumemtrace::test::parse;
using cumemtrace::test::three_sites;
using Json = nlohmann::ordered_json;

namespace {

// [frame, bytes, allocations, omitted] of each node, depth first.
void flatten(const Json& node, Json& out) {
  for (const Json& c : node.at("children")) {
    out.push_back(Json::array({c.at("frame"), c.at("bytes"), c.at("allocations"), c.at("omitted")}));
    flatten(c, out);
  }
}
Json flat(const Json& tree) {
  Json out = Json::array();
  flatten(tree, out);
  return out;
}

}  // namespace

TEST_CASE("html: the page's allocation views are report --view's figures, cut to --top and --frames") {
  const Trace t = parse(three_sites());
  const Report rep = build_report(t, ReportOptions{});
  const Stacks stacks(t);
  HtmlDataOptions opt;
  opt.top = 2;
  opt.frames = 1;
  const Json d = html_data(t, rep, stacks, page_model(t, MemoryEvents(t.events), rep, stacks, opt), opt);
  const Json& a = d.at("allocations");
  CHECK(a.at("allocations") == 6);
  CHECK(a.at("bytes") == 1081082368);
  CHECK(a.at("temporary") == 2);

  // By count: scratch 3 (1 + 1 MiB + 512 B = 2,097,664 B), step 2 (5 MiB), then load: --top 2
  // keeps two and counts the third.
  const Json& top = a.at("top_allocations");
  REQUIRE(top.at("rows").size() == 2);
  CHECK(top.at("omitted") == 1);
  const Json& first = top.at("rows").at(0);
  CHECK(first.at("site") == "scratch at train.cpp:30");
  CHECK(first.at("allocations") == 3);
  CHECK(first.at("bytes") == 2097664);
  CHECK(first.at("temporary") == 2);
  CHECK(first.at("temporary_bytes") == 2 * MiB);
  // --frames 1: the call site's own frame only.
  REQUIRE(first.at("frames").size() == 1);
  CHECK(first.at("frames").at(0).at("function") == "scratch");
  CHECK(top.at("rows").at(1).at("site") == "step at train.cpp:20");
  CHECK(top.at("rows").at(1).at("bytes") == 5 * MiB);

  // Temporary: scratch alone, B and D.
  const Json& temporary = a.at("temporary_sites");
  REQUIRE(temporary.at("rows").size() == 1);
  CHECK(temporary.at("omitted") == 0);
  CHECK(temporary.at("rows").at(0).at("site") == "scratch at train.cpp:30");

  // Sizes: F in 2^9, B and D in 2^20, C and E in 2^21, A in 2^30: the 22 ranges 2^9 to 2^30.
  const Json& sizes = a.at("sizes");
  REQUIRE(sizes.size() == 22);
  CHECK(sizes.at(0) == Json{{"log2", 9}, {"range", "512 B to 1 KiB"}, {"allocations", 1}, {"bytes", 512}});
  CHECK(sizes.at(1).at("allocations") == 0);
  CHECK(sizes.at(11) == Json{{"log2", 20}, {"range", "1 MiB to 2 MiB"}, {"allocations", 2}, {"bytes", 2 * MiB}});
  CHECK(sizes.at(12) == Json{{"log2", 21}, {"range", "2 MiB to 4 MiB"}, {"allocations", 2}, {"bytes", 5 * MiB}});
  CHECK(sizes.at(21) == Json{{"log2", 30}, {"range", "1 GiB to 2 GiB"}, {"allocations", 1}, {"bytes", GiB}});

  // Top-down: main (all six), below it load 1 GiB and step 5 MiB; --top 2 leaves scratch out.
  CHECK(flat(a.at("tree")) == Json::parse(R"([["main [train]", 1081082368, 6, 1],
                                                ["load [train]", 1073741824, 1, 0],
                                                ["step [train]", 5242880, 2, 0]])"));
  CHECK(a.at("tree").at("omitted") == 0);
  // Bottom-up, --frames 1 deep: the call sites alone, the two with the most bytes, one left out.
  CHECK(flat(a.at("callers")) ==
        Json::parse(R"([["load [train]", 1073741824, 1, 0], ["step [train]", 5242880, 2, 0]])"));
  CHECK(a.at("callers").at("omitted") == 1);
}

TEST_CASE("html: a tree keeps its first nodes, depth first, and counts the children it left out") {
  const Trace t = parse(three_sites());
  const Stacks stacks(t);
  AllocationScan scan(stacks);
  for (const Event& e : t.events) scan.observe(e);
  // Two nodes: main, then its first child (load, the most bytes); main's other two counted.
  const Json a = allocation_views_json(scan.finish(), ViewContext{stacks, 10, 6}, 2);
  CHECK(flat(a.at("tree")) ==
        Json::parse(R"([["main [train]", 1081082368, 6, 2], ["load [train]", 1073741824, 1, 0]])"));
  // Bottom-up: the sites by bytes, load and its caller main; step's and scratch's left out.
  CHECK(flat(a.at("callers")) ==
        Json::parse(R"([["load [train]", 1073741824, 1, 0], ["main [train]", 1073741824, 1, 0]])"));
  CHECK(a.at("callers").at("omitted") == 2);
}
