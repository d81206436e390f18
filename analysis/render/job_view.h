// Renders a Job (job.h): text for `cumemtrace report`, JSON for its --json (docs/report-json.md,
// "The job object"). Rendering only; every figure is computed in job.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>

#include "reports/job/job.h"

namespace cumemtrace {

void write_job_text(std::ostream& out, const Job& job);
nlohmann::ordered_json job_to_json(const Job& job);
// In a trace's report given with others: its exports the job view found still open in
// another process (set_aside_exports), one line each; nothing when none.
void write_exports_still_open(std::ostream& out, const Report& rep);

}  // namespace cumemtrace
