// Files named by options (`report --categories FILE`) are input too: read whole, but
// never more than a limit, so /dev/zero or a huge file is a usage error that says so, not
// memory exhausted (docs/cli.md, "Patterns of yours").
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace cumemtrace {

inline constexpr size_t kOptionFileMaxBytes = size_t(1) << 20;

// The file's bytes; nullopt with `why` ("cannot be read", "larger than 1 MiB") if not.
std::optional<std::string> read_option_file(const std::string& path, std::string& why,
                                            size_t limit = kOptionFileMaxBytes);

}  // namespace cumemtrace
