// Whether a report's figures are the whole truth, and why not: the rule behind the report's
// FIGURES ARE INCOMPLETE (Integrity::incomplete(): damage, an End record that disagrees,
// dropped events, impossible events set aside), plus what a gate cannot pass without: an
// End record (a process killed or a trace cut short lost its last events) and a device seen
// (figures of no device are no figures). `check`, `baseline` and `diff` give no verdict on
// such a trace unless asked to (--allow-incomplete), and then say "on incomplete figures".
#pragma once

#include <string>
#include <vector>

#include "reports/report.h"

namespace cumemtrace {

// Exit status of `check`, `baseline` and `diff` for a trace whose figures are incomplete
// (docs/cli.md): apart from 1 (a limit broken) and 2 (usage, unreadable).
inline constexpr int kExitIncomplete = 3;
// Exit status of `check` when a trace measured nothing: no limit applied to it (no device
// seen, no device a limit names) and no other failed.
inline constexpr int kExitNotJudged = 4;

// One short clause per cause ("2 damaged byte ranges, the first at byte 4096"); empty when
// the figures are complete.
std::vector<std::string> incomplete_reasons(const Report& rep);

// The clauses joined by "; ".
std::string join_reasons(const std::vector<std::string>& reasons);

}  // namespace cumemtrace
