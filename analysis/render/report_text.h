// Renders a Report / LiveReport for a person: IEC sizes (exact bytes beside the
// headline figures), times in seconds since the process started.
#pragma once

#include <ostream>

#include "reports/report.h"

namespace cumemtrace {

void write_text(std::ostream& out, const Report& rep);
void write_live_text(std::ostream& out, const LiveReport& live, uint64_t start_ns);
// "device N", "host", or for device memory refused before any device was known "no
// device (none current on its thread)": where a failed allocation was, in every section.
std::string failure_place(const FailedRow& f);

}  // namespace cumemtrace
