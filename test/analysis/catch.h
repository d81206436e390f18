// Catch2 v3 where installed; Debian 12 ships only v2 (package catch2 2.13), whose single
// header has the same macros. Tests include this and never the Catch2 headers directly.
#pragma once

#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#else
#include <catch2/catch.hpp>
#endif
