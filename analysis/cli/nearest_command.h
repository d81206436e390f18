// A mistyped command is answered with the command it most likely meant ("reprot" ->
// "report"), where CLI11 alone says only "A subcommand is required".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cumemtrace {

// The name in `names` nearest to `word`: fewest edits (insert, delete, substitute, or swap
// two neighbours: Damerau's optimal string alignment), at most 2 and fewer than half of
// `word`'s length, else a name that `word` starts or that starts with `word`; "" when none
// is near. Ties go to the earlier name.
std::string nearest_command(std::string_view word, const std::vector<std::string>& names);

}  // namespace cumemtrace
