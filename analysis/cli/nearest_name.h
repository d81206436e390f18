// A mistyped name is answered with the name it most likely meant: a command ("reprot" ->
// "report"), an option ("--max-peek" -> "--max-peak") or an option's word ("--by
// categry" -> "category"), where CLI11 alone says only that it was not expected.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cumemtrace {

// The name in `names` nearest to `word`: fewest edits (insert, delete, substitute, or swap
// two neighbours: Damerau's optimal string alignment), at most 2 and fewer than half of
// `word`'s length, else a name that `word` starts or that starts with `word`; "" when none
// is near. Ties go to the earlier name.
std::string nearest_name(std::string_view word, const std::vector<std::string>& names);

// "; did you mean 'report'?" after the message that `word` is not one of `names`, or ""
// when none is near.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& names);

}  // namespace cumemtrace
