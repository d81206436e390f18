// `cumemtrace live`: docs/cli.md.
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "commands.h"
#include "live_time.h"
#include "progress.h"
#include "report.h"
#include "report_json.h"
#include "report_text.h"
#include "trace_check.h"

namespace cumemtrace {

int cmd_live(const std::string& path, const std::vector<std::string>& at_args, bool json) {
  std::vector<std::string> parts;
  for (const auto& a : at_args) {
    if (a.empty()) parts.push_back(a);  // an error, said below
    std::stringstream ss(a);
    for (std::string part; std::getline(ss, part, ',');) parts.push_back(part);
    if (!a.empty() && a.back() == ',') parts.emplace_back();
  }
  std::optional<ProgressScope> progress(std::in_place, "cumemtrace live");
  Trace t = read_trace(path);
  progress->clear();
  if (!check_trace(t)) return 1;
  std::vector<uint64_t> ats;
  std::map<std::string, uint64_t> parsed;  // "peak" replays the whole trace: once is enough
  for (const auto& part : parts) {
    if (auto known = parsed.find(part); known != parsed.end()) {
      ats.push_back(known->second);
      continue;
    }
    std::string error;
    auto at = parse_moment(part, t, error);
    if (!at) {
      std::cerr << "cumemtrace live: " << error << "\n";
      return 2;
    }
    ats.push_back(*at);
    parsed.emplace(part, *at);
  }
  const uint64_t start = t.process ? t.process->start_monotonic_ns : 0;
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  const std::vector<LiveReport> lives = build_live(t, ats);
  progress.reset();  // the bar's line ends before the output
  for (const LiveReport& lr : lives) {
    if (json)
      out.push_back(to_json(lr));
    else
      write_live_text(std::cout, lr, start);
  }
  if (json) std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace cumemtrace
