// 1.15: the environment variables the Process record keeps after the launcher's
// (docs/trace-format.md, `Process`): a fixed list, never the whole environment, of the
// settings that bound a framework's own device memory, so that a report can tell a
// framework's limit reached from a device that ran out (docs/cli.md, "A framework's
// limit").
#pragma once

#include <string_view>

namespace cumemtrace::format {

inline constexpr std::string_view kFrameworkVariables[] = {
    "XLA_PYTHON_CLIENT_PREALLOCATE",   // JAX: "false" or "0" turns preallocation off
    "XLA_PYTHON_CLIENT_MEM_FRACTION",  // JAX: the fraction of the device its allocator may take (0.75)
    "XLA_PYTHON_CLIENT_ALLOCATOR",     // JAX: "platform" allocates on demand, with no limit
};

}  // namespace cumemtrace::format
