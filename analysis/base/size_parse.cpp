#include "base/size_parse.h"

#include <cctype>
#include <utility>

namespace cumemtrace {
namespace {

constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
    {"", 1},
    {"b", 1},
    {"kib", 1ull << 10},
    {"mib", 1ull << 20},
    {"gib", 1ull << 30},
    {"tib", 1ull << 40},
    {"kb", 1000ull},
    {"mb", 1000'000ull},
    {"gb", 1000'000'000ull},
    {"tb", 1000'000'000'000ull},
};

std::optional<uint64_t> fail(std::string* error, std::string why) {
  if (error) *error = std::move(why);
  return std::nullopt;
}

}  // namespace

std::optional<uint64_t> parse_size(std::string_view text, std::string* error) {
  const std::string original(text);
  size_t i = 0;
  // Digits before and after an optional point, as integers: no floating point, so that
  // "1.5GB" is exactly 1,500,000,000.
  unsigned __int128 whole = 0, frac = 0, frac_scale = 1;
  bool digits = false;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, digits = true) {
    whole = whole * 10 + unsigned(text[i] - '0');
    if (whole > ~uint64_t(0)) return fail(error, "'" + original + "' is too large");
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, digits = true) {
      if (frac_scale > 1'000'000'000'000'000ull) return fail(error, "'" + original + "' has too many decimals");
      frac = frac * 10 + unsigned(text[i] - '0');
      frac_scale *= 10;
    }
  }
  if (!digits) return fail(error, "'" + original + "' is not a size (e.g. 512MiB, 1.5GB, 2GiB, or bytes)");
  while (i < text.size() && text[i] == ' ') ++i;
  std::string unit;
  for (; i < text.size(); ++i) unit += char(std::tolower(static_cast<unsigned char>(text[i])));
  for (const auto& [name, factor] : kUnits) {
    if (unit != name) continue;
    const unsigned __int128 scaled = frac * factor;
    if (scaled % frac_scale != 0) return fail(error, "'" + original + "' is not a whole number of bytes");
    const unsigned __int128 bytes = whole * factor + scaled / frac_scale;
    if (bytes > ~uint64_t(0)) return fail(error, "'" + original + "' is too large");
    return uint64_t(bytes);
  }
  return fail(error, "'" + original + "' has an unknown unit (B, KiB, MiB, GiB, TiB, kB, MB, GB, TB)");
}

bool is_size_unit(std::string_view text) {
  std::string unit;
  for (const char c : text) unit += char(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [name, factor] : kUnits)
    if (!name.empty() && unit == name) return true;
  return false;
}

}  // namespace cumemtrace
