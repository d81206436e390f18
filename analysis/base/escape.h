// Strings from a trace (argv, host name, paths, symbol names) are whatever bytes the
// traced process had. Before they reach a terminal or a JSON document they are escaped
// by one rule (docs/report-json.md, docs/cli.md): every byte that is not part of valid
// UTF-8 is written as \xNN (two lowercase hex digits); for text output, control
// characters (C0, DEL, C1) are written the same way, so an ESC sequence or a newline in
// a command line cannot rewrite the terminal or forge report lines.
#pragma once

#include <string>
#include <string_view>

namespace cumemtrace {

// Valid UTF-8 kept; other bytes as \xNN.
std::string utf8_escaped(std::string_view s);

// As utf8_escaped, and control characters as \xNN too: safe to print.
std::string printable(std::string_view s);

}  // namespace cumemtrace
