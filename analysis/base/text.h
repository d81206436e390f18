// Small text predicates shared by the rules that classify frames and libraries.
#pragma once

#include <string_view>

namespace cumemtrace {

// Whether `part` occurs anywhere in `s` (std::string_view::contains is C++23).
inline bool has(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

}  // namespace cumemtrace
