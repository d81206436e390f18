// Bounds on a regular expression a user hands the CLI (--categories FILE,
// --allocator-frames), checked before glibc's regcomp sees it: regcomp recurses once per
// nesting level (20,000 nested parentheses overflow the stack) and copies a group once
// per repetition count (((a{1000}){1000}){1000} asks for gigabytes). docs/cli.md,
// "Patterns of yours", states the three bounds.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cumemtrace {

inline constexpr size_t kPatternMaxBytes = 4096;
inline constexpr size_t kPatternMaxDepth = 32;  // parentheses inside parentheses
// The pattern's length with every repetition count {m,n} applied (the larger of m and
// n, or m + 1 for {m,}), as regcomp expands it: what it costs to compile.
inline constexpr size_t kPatternMaxExpanded = 100000;

// Empty when `pattern` is within the bounds, else which bound it passes, in words.
std::string pattern_out_of_bounds(std::string_view pattern);

}  // namespace cumemtrace
