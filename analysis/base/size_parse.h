// The one parser of sizes the command line accepts (check's limits, tolerances): a whole
// number of bytes, written plainly or with a unit — IEC (KiB, MiB, GiB, TiB: powers of
// 1024) or SI (kB/KB, MB, GB, TB: powers of 1000), an optional space and "B" for bytes;
// decimals allowed when the product is a whole number of bytes ("1.5GB", "0.5 GiB").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cumemtrace {

// Bytes, or nothing with `error` saying why.
std::optional<uint64_t> parse_size(std::string_view text, std::string* error = nullptr);

// Whether `text` is a unit alone ("GiB", "mb", "B"): the second half of a size the shell
// split at its space ("--max-peak 40 GiB" unquoted).
bool is_size_unit(std::string_view text);

}  // namespace cumemtrace
