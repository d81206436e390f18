// JUnit XML for `cumemtrace check --junit FILE`, as GitHub Actions, GitLab and Jenkins read
// it (docs/formats.md, "JUnit XML"): one <testsuite> per trace, one
// <testcase> per limit and device, a <failure message="..."> when it does not hold.
#pragma once

#include <ostream>
#include <vector>

#include "gate/check.h"

namespace cumemtrace {

void write_junit(std::ostream& out, const std::vector<TraceCheck>& checks);

}  // namespace cumemtrace
