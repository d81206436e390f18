// Shared by the commands that read traces: what is wrong with one, said on stderr.
#pragma once

#include "cumemtrace/reader.h"

namespace cumemtrace {

// Says on stderr what is wrong with a trace: each damaged range, then a summary.
// Returns false when nothing was readable.
bool check_trace(const Trace& t);

}  // namespace cumemtrace
