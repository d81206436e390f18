// A mistyped option is answered with the option it most likely meant, by the rule a
// mistyped command is answered with (nearest_name.h): CLI11 alone says "The following
// argument was not expected: --max-peek", or that the traces are missing when the word
// after the typo was taken for the option's value.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace cumemtrace {

// The message for the first word of `argv` (after the command's name, argv[1], up to "--")
// that is written as a long option, --NAME or --NAME=VALUE, and is none of `command`'s
// options nor `app`'s: "cumemtrace check: '--max-peek' is not an option of check; did you
// mean '--max-peak'?" and where the command's help lists them. "" when there is none.
std::string unknown_option(const CLI::App& app, const CLI::App& command, int argc, char** argv);

}  // namespace cumemtrace
