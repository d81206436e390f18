#include "render/junit.h"

#include <string>

namespace cumemtrace {
namespace {

// XML 1.0 attribute text: the five entities, other control characters as spaces (XML 1.0
// cannot carry them at all).
std::string attr(const std::string& s) {
  std::string out;
  for (const unsigned char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c < 0x20 && c != '\t' ? ' ' : char(c);
    }
  }
  return out;
}

}  // namespace

void write_junit(std::ostream& out, const std::vector<TraceCheck>& checks) {
  size_t tests = 0, failures = 0;
  for (const auto& c : checks)
    for (const auto& r : c.results) ++tests, failures += !r.ok;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"cumemtrace check\" tests=\"" << tests << "\" failures=\"" << failures << "\">\n";
  for (const auto& c : checks) {
    size_t f = 0;
    for (const auto& r : c.results) f += !r.ok;
    out << "  <testsuite name=\"" << attr(c.path) << "\" tests=\"" << c.results.size() << "\" failures=\"" << f
        << "\" errors=\"0\" skipped=\"0\">\n";
    for (const auto& r : c.results) {
      const std::string message = r.message + (r.note.empty() ? "" : " " + r.note);
      out << "    <testcase classname=\"cumemtrace.check\" name=\"" << attr(r.name) << "\"";
      if (r.ok && !r.note.empty()) {
        out << ">\n      <system-out>" << attr(r.note) << "</system-out>\n    </testcase>\n";
      } else if (r.ok) {
        out << "/>\n";
      } else {
        out << ">\n      <failure message=\"" << attr(message) << "\" type=\""
            << (r.incomplete ? "incomplete"
                : r.unjudged ? "not-judged"
                             : "limit")
            << "\">" << attr(message) << "</failure>\n    </testcase>\n";
      }
    }
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
}

}  // namespace cumemtrace
