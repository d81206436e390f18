// `cumemtrace dump`: one line per record, for debugging the writer. The output format is
// unstable: do not parse it (use `report --json`).
#pragma once

#include <cstdint>
#include <ostream>
#include <optional>
#include <span>
#include <string>

#include "read/reader.h"

namespace cumemtrace {

// Returns why nothing was listed (not a trace: its header does not read), or nullopt when
// the records were listed; damage found on the way is listed too, as "damage:" lines.
std::optional<std::string> dump(std::ostream& out, std::span<const uint8_t> bytes);

}  // namespace cumemtrace
