// `cumemtrace html TRACE... -o report.html` (docs/cli.md, docs/html-report.md).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cumemtrace {

struct HtmlOptions {
  std::vector<std::string> traces;
  std::string output;  // the page to write
  size_t top = 10;     // call-site rows per table, as `report --top`
  size_t frames = 6;   // frames per call site in the tables, as `report --frames`
};

// 0 when every trace was read; 1 when one could not be (the page still holds the rest).
int cmd_html(const HtmlOptions& opt);

}  // namespace cumemtrace
