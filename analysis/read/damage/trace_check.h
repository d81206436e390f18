// Shared by the commands that read traces: what is wrong with one, said on stderr.
#pragma once

#include <iostream>

#include "read/reader.h"

namespace cumemtrace {

// Says on `err` (stderr unless a command gathers it to print in order) what is wrong with
// a trace: each damaged range, then a summary. Returns false when nothing was readable.
bool check_trace(const Trace& t, std::ostream& err = std::cerr);

}  // namespace cumemtrace
