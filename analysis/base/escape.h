// Strings from a trace (argv, host name, paths, symbol names, NVTX and heap names) are
// whatever bytes the traced process had. Before they reach any output they are escaped by
// one rule per kind of output (docs/cli.md, "Strings from a trace"; docs/report-json.md):
// every byte that is not part of valid UTF-8 is written as \xNN (two lowercase hex
// digits); for text, control characters (C0, DEL, C1) are written the same way, so an ESC
// sequence or a newline in a name cannot rewrite the terminal, forge report lines or start
// a CI runner's workflow command. JSON documents: json_text.h.
#pragma once

#include <string>
#include <string_view>

namespace cumemtrace {

// Valid UTF-8 kept; other bytes as \xNN.
std::string utf8_escaped(std::string_view s);

// Terminal and plain text (report, check, diff, dump, folded stacks, messages): as
// utf8_escaped, and control characters as \xNN too, so a record stays on one line.
std::string printable(std::string_view s);

// XML 1.0 character data and attribute values (JUnit): printable, then the five markup
// characters as entities. No control character is left (XML 1.0 cannot carry them) and
// no "]]>" (a '>' is always &gt;), so the text is well-formed in an element, an attribute
// or a CDATA section.
std::string xml_text(std::string_view s);

// The message of a GitHub Actions workflow command (`::error title=T::MESSAGE`):
// printable, then '%' as %25, so no name can end the command or start another one.
std::string github_message(std::string_view s);

}  // namespace cumemtrace
