// `cumemtrace check TRACE… [limits] [--junit FILE] [--github]` (docs/cli.md). Exit status:
// 0 when every limit holds, 1 when one does not, 2 for a usage error or a trace that
// cannot be read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "check.h"

namespace cumemtrace {

struct CheckOptions {
  std::vector<std::string> traces;
  std::vector<Limit> limits;
  std::string baseline;        // --baseline FILE (a baseline or a trace), or empty
  std::string tolerance = "0";  // --tolerance: PCT% of the baseline figure, or SIZE
  std::string junit;    // file to write, or empty
  bool github = false;  // print ::error workflow commands
  // --max-rank-imbalance PCT: a limit on the job of all traces together (job.h): no rank's
  // peak on its own device may differ from the median by more than PCT percent.
  std::optional<double> max_rank_imbalance;
  bool allow_incomplete = false;  // a verdict on incomplete figures (completeness.h), saying so
};

int run_check(const CheckOptions& opt);

}  // namespace cumemtrace
