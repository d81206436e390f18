// Renders a Report / LiveReport for a person: IEC sizes (exact bytes beside the
// headline figures), times in seconds since the process started.
#pragma once

#include <ostream>

#include "reports/report.h"

namespace cumemtrace {

void write_text(std::ostream& out, const Report& rep);
// The report's Summary as `write_text` prints it (a blank line, "Summary", then a line
// each, indented by two): the answer first, each device's peak and what held it, what
// failed and why, growth per iteration, what was held at exit. The page shows these lines.
void summary(std::ostream& out, const Report& rep);
void write_live_text(std::ostream& out, const LiveReport& live, uint64_t start_ns);
// "device N", "host", or for device memory refused before any device was known "no
// device (none current on its thread)": where a failed allocation was, in every section.
std::string failure_place(const FailedRow& f);

}  // namespace cumemtrace
