// A count in words, the noun singular for exactly one: "1 limit check", "2 limit checks",
// "1 process", "3 processes". Every count the CLI writes before its noun goes through
// here, so that no message says "1 processes" or hedges with "(s)".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cumemtrace {

// The noun's plural: English adds "es" after a hissing end (process, launch, box), makes a
// "y" after a consonant "ies" (inconsistency, entry), else adds "s" (day, key, block).
inline std::string plural_of(std::string_view noun) {
  const auto ends = [&](std::string_view tail) { return noun.ends_with(tail); };
  if (noun.size() >= 2 && ends("y") && std::string_view("aeiou").find(noun[noun.size() - 2]) == std::string_view::npos)
    return std::string(noun.substr(0, noun.size() - 1)) + "ies";
  return std::string(noun) + (ends("s") || ends("x") || ends("z") || ends("ch") || ends("sh") ? "es" : "s");
}

// "1 allocation", "0 allocations", "2 graph launches".
inline std::string count_of(uint64_t n, std::string_view noun) {
  return std::to_string(n) + " " + (n == 1 ? std::string(noun) : plural_of(noun));
}

}  // namespace cumemtrace
