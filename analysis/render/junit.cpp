#include "render/junit.h"

#include <string>

#include "base/escape.h"

namespace cumemtrace {

void write_junit(std::ostream& out, const std::vector<TraceCheck>& checks) {
  size_t tests = 0, failures = 0;
  for (const auto& c : checks)
    for (const auto& r : c.results) ++tests, failures += !r.ok;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"cumemtrace check\" tests=\"" << tests << "\" failures=\"" << failures << "\">\n";
  for (const auto& c : checks) {
    size_t f = 0;
    for (const auto& r : c.results) f += !r.ok;
    out << "  <testsuite name=\"" << xml_text(c.path) << "\" tests=\"" << c.results.size() << "\" failures=\"" << f
        << "\" errors=\"0\" skipped=\"0\">\n";
    for (const auto& r : c.results) {
      const std::string message = r.message + (r.note.empty() ? "" : " " + r.note);
      out << "    <testcase classname=\"cumemtrace.check\" name=\"" << xml_text(r.name) << "\"";
      if (r.ok && !r.note.empty()) {
        out << ">\n      <system-out>" << xml_text(r.note) << "</system-out>\n    </testcase>\n";
      } else if (r.ok) {
        out << "/>\n";
      } else {
        out << ">\n      <failure message=\"" << xml_text(message) << "\" type=\""
            << (r.incomplete ? "incomplete"
                : r.unjudged ? "not-judged"
                             : "limit")
            << "\">" << xml_text(message) << "</failure>\n    </testcase>\n";
      }
    }
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
}

}  // namespace cumemtrace
