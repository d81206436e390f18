// Test-only: the growth site of a stack that is its own call site (growth.h).
#pragma once

#include <cstdint>

#include "catch.h"
#include "reports/growth/growth.h"

namespace cumemtrace::test {

inline const GrowthSite& growth_site(const Growth& g, uint32_t stack) {
  for (const auto& s : g.sites)
    if (s.node == stack) return s;
  FAIL("no growth site for stack " << stack);
  throw;
}

}  // namespace cumemtrace::test
