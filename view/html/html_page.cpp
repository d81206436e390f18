// Assembles the page: styles, libraries, data, view script, in that order.
#include "html_page.h"

#include <string>

namespace cumemtrace {
namespace {

std::string html_text(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Inside <script>, "</script" or "<!--" would end or confuse the element; JSON allows
// "\u003c" wherever '<' may appear (only inside strings, so the escape keeps it valid).
void json_blob(std::ostream& out, const nlohmann::ordered_json& data) {
  const std::string s = data.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  size_t from = 0;
  for (size_t at = s.find('<'); at != std::string::npos; at = s.find('<', from)) {
    out.write(s.data() + from, std::streamsize(at - from));
    out << "\\u003c";
    from = at + 1;
  }
  out.write(s.data() + from, std::streamsize(s.size() - from));
}

// A library's file must not close our <script> element early either.
void script(std::ostream& out, std::string_view js) {
  out << "<script>";
  size_t from = 0;
  for (size_t at = js.find("</script"); at != std::string_view::npos; at = js.find("</script", from)) {
    out << js.substr(from, at - from) << "<\\/script";
    from = at + 8;
  }
  out << js.substr(from) << "</script>\n";
}

}  // namespace

void write_html_page(std::ostream& out, const nlohmann::ordered_json& data, std::string_view title) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         // No request may leave the page: a CSP that allows only inline content enforces it.
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
      << "<title>" << html_text(title) << "</title>\n";
  for (const char* css : {"uplot.css", "view.css"}) out << "<style>" << html_asset(css) << "</style>\n";
  out << "</head>\n<body>\n<div id=\"app\"></div>\n";
  out << "<script type=\"application/json\" id=\"cumemtrace-data\">";
  json_blob(out, data);
  out << "</script>\n";
  for (const char* js : {"uplot.js", "d3.js", "flamegraph.js", "view.js"}) script(out, html_asset(js));
  out << "</body>\n</html>\n";
}

}  // namespace cumemtrace
