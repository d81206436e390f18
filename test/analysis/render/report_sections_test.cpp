// The report's sections table (render/report/sections.h): write_text and report_json are
// loops over it, so each section must be written at most once in each output, and the JSON's
// keys must come out in the order they always had.
#include <map>
#include <string>
#include <vector>

#include "catch.h"
#include "render/report/sections.h"
#include "render/report_json.h"

using namespace cumemtrace;

TEST_CASE("report sections: every row writes something, and no section twice in one output", "[render][report]") {
  std::map<std::string, int> in_text, in_json;
  for (const ReportSection& s : report_sections()) {
    CHECK((s.text != nullptr || s.json != nullptr));
    if (s.text) ++in_text[std::string(s.name)];
    if (s.json) ++in_json[std::string(s.name)];
  }
  for (const auto& [name, n] : in_text) CHECK(n == 1);
  for (const auto& [name, n] : in_json) CHECK(n == 1);
  // 18 sections: the summary only in the text, the exit status and framework limit ("exit")
  // only in the JSON, 16 in both; 3 of those (held at exit, exports still open,
  // reservations) placed apart by the two outputs, so 16 + 3 + 2 = 21 rows.
  CHECK(in_text.size() == 17);
  CHECK(in_json.size() == 17);
  CHECK(report_sections().size() == 21);
}

TEST_CASE("report sections: the JSON's keys in their order of schema version 3", "[render][report]") {
  // An empty report: no categories, ranges, functions, pools or blocks, so none of their
  // keys; every other section's, in the order report_json has always written them, and
  // largest_at_peak (an empty list) after the devices.
  const nlohmann::ordered_json j = report_json(Report{});
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  const std::vector<std::string> expected = {"format",
                                             "schema_version",
                                             "trace",
                                             "integrity",
                                             "process",
                                             "duration_ns",
                                             "devices",
                                             "largest_at_peak",
                                             "leaks",
                                             "held_by_cache_at_exit",
                                             "failed_allocations",
                                             "failed_allocations_total",
                                             "failed_allocations_recovered",
                                             "failed_allocations_omitted",
                                             "exported_still_open",
                                             "exit_status",
                                             "framework_limit",
                                             "failed_frees",
                                             "failed_frees_total",
                                             "failed_frees_omitted",
                                             "contexts",
                                             "reservations",
                                             "growth"};
  CHECK(keys == expected);
}

TEST_CASE("report sections: a section's own figures are held in the report by their type", "[render][report]") {
  struct Mine {
    int n = 0;
  };
  SectionResults held;
  CHECK(held.find<Mine>() == nullptr);  // no step made them
  held.get<Mine>().n = 3;
  held.get<Mine>().n += 4;  // the same figures, not new ones
  REQUIRE(held.find<Mine>() != nullptr);
  CHECK(held.find<Mine>()->n == 7);
  CHECK(held.find<int>() == nullptr);  // another type is another section's
  const SectionResults copy = held;    // a report copied keeps them
  CHECK(copy.find<Mine>()->n == 7);
}
