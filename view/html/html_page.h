// The page of `cumemtrace html`: one self-contained HTML file. The third-party libraries
// (view/html/package.json, pinned in package-lock.json) and our view script are embedded
// into the CLI at build time (view/html/CMakeLists.txt), so the page makes no request and
// the installed CLI needs no node_modules.
#pragma once

#include <ostream>
#include <string_view>

#include <nlohmann/json.hpp>

namespace cumemtrace {

// False when the CLI was built without the view libraries (scripts/html_assets.sh not run).
bool html_assets_built();

// The file embedded under `name` (e.g. "uplot.js"); empty when absent.
std::string_view html_asset(std::string_view name);

// Writes the page with `data` as its one JSON blob; docs/html-report.md describes `data`.
void write_html_page(std::ostream& out, const nlohmann::ordered_json& data, std::string_view title);

}  // namespace cumemtrace
