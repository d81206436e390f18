// `cumemtrace diff OLD NEW [--json]` (docs/cli.md): what changed between two traces or baselines.
#include <iostream>
#include <map>
#include <memory>

#include "cli/baseline_command.h"
#include "cli/command.h"
#include "gate/completeness.h"
#include "base/json_text.h"
#include "base/units.h"

namespace cumemtrace {
namespace {

int run_diff(const std::string& before_path, const std::string& after_path, bool json, bool allow_incomplete) {
  std::string error;
  Incomplete incomplete;
  incomplete.allow = allow_incomplete;
  const auto before = load_baseline(before_path, &error, &incomplete);
  const auto after = before ? load_baseline(after_path, &error, &incomplete) : std::nullopt;
  if (!before || !after) {
    std::cerr << "cumemtrace diff: " << error << "\n";
    return incomplete.found ? kExitIncomplete : 2;
  }
  for (const auto& note : incomplete.notes)
    std::cerr << "cumemtrace diff: " << note << "; the differences are on incomplete figures\n";
  const auto changes = diff_sites(*before, *after);
  std::map<int32_t, std::pair<Baseline::Device, Baseline::Device>> devices;
  for (const auto& [d, v] : before->devices) devices[d].first = v;
  for (const auto& [d, v] : after->devices) devices[d].second = v;
  if (json) {
    nlohmann::ordered_json j;
    j["format"] = "cumemtrace-diff";
    j["version"] = 1;
    nlohmann::ordered_json devs = nlohmann::ordered_json::array();
    for (const auto& [d, v] : devices)
      devs.push_back(
          {{"device", d},
           {"peak", {{"before", v.first.peak}, {"after", v.second.peak}}},
           {"leaked", {{"before", v.first.leaked}, {"after", v.second.leaked}}},
           {"failed", {{"before", v.first.failed}, {"after", v.second.failed}}},
           {"held_by_cache_at_exit", {{"before", v.first.held_by_cache}, {"after", v.second.held_by_cache}}}});
    j["devices"] = std::move(devs);
    nlohmann::ordered_json sites = nlohmann::ordered_json::array();
    for (const auto& c : changes)
      sites.push_back({{"change", change_name(c.kind)},
                       {"key", c.key},
                       {"device", c.device},
                       {"bytes_at_peak", {{"before", c.before.bytes_at_peak}, {"after", c.after.bytes_at_peak}}},
                       {"leaked", {{"before", c.before.leaked}, {"after", c.after.leaked}}}});
    j["call_sites"] = std::move(sites);
    std::cout << json_text(j, 2) << "\n";
    return 0;
  }
  auto signed_bytes = [](uint64_t a, uint64_t b) { return (b >= a ? "+" : "-") + iec_exact(b >= a ? b - a : a - b); };
  for (const auto& [d, v] : devices) {
    std::cout << "device " << d << ": peak " << iec_exact(v.first.peak) << " -> " << iec_exact(v.second.peak) << " ("
              << signed_bytes(v.first.peak, v.second.peak) << "); possible leaks " << iec_exact(v.first.leaked)
              << " -> " << iec_exact(v.second.leaked) << " (" << signed_bytes(v.first.leaked, v.second.leaked)
              << "); held by caching allocators at exit (not leaks) " << iec_exact(v.first.held_by_cache) << " -> "
              << iec_exact(v.second.held_by_cache) << "; failed " << v.first.failed << " -> " << v.second.failed
              << "\n";
  }
  std::cout << (changes.empty() ? "no call site changed\n" : "call sites, largest change first:\n");
  for (const auto& c : changes)
    std::cout << "  " << change_name(c.kind) << " (device " << c.device << ") " << printable(c.key) << ": at peak "
              << iec(c.before.bytes_at_peak) << " -> " << iec(c.after.bytes_at_peak) << ", leaked "
              << iec(c.before.leaked) << " -> " << iec(c.after.leaked) << "\n";
  return 0;
}

}  // namespace

Command register_diff(CLI::App& app) {
  struct Options {
    std::string before, after;
    bool json = false;
  };
  const auto o = std::make_shared<Options>();
  Command c;
  c.sub = app.add_subcommand("diff", "Peak, leaks and call sites: what changed from OLD to NEW");
  c.sub->add_option("old", o->before, "Trace or baseline file")->required();
  c.sub->add_option("new", o->after, "Trace or baseline file")->required();
  c.sub->add_flag("--json", o->json, "JSON output");
  add_shared_options(c.sub, kCallSiteOptions | kAllowIncomplete);
  c.run = [o] { return run_diff(o->before, o->after, o->json, allow_incomplete()); };
  return c;
}

}  // namespace cumemtrace
