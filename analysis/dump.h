// `cumemtrace dump`: one line per record, for debugging the writer. The output format is
// unstable: do not parse it (use `report --json`).
#pragma once

#include <cstdint>
#include <ostream>
#include <span>

#include "cumemtrace/reader.h"

namespace cumemtrace {

void dump(std::ostream& out, std::span<const uint8_t> bytes);

}  // namespace cumemtrace
