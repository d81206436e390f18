// The options and validators that more than one command shares (command.h).
#include <charconv>
#include <cmath>
#include <iostream>
#include <stdexcept>

#include "stacks/allocator_frames.h"
#include "stacks/call_site_rule.h"
#include "cli/command.h"
#include "base/escape.h"
#include "base/output_file.h"
#include "cli/trace_inputs.h"

namespace cumemtrace {
namespace {

// One set for all commands: only one command is parsed, and apply_shared_options puts them
// into effect for any, as defaults where the command takes none.
struct Shared {
  std::vector<std::string> allocator_frames;
  bool no_allocator_skip = false;
  bool allow_incomplete = false;
  bool output_force = false;
  std::string call_site = "user";
  std::vector<std::string> user_packages;
};
Shared& shared() {
  static Shared s;
  return s;
}

CLI::Validator count_at_least(long long least) {
  return CLI::Validator(
      [least](std::string& v) {
        long long n = 0;
        const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        return ec == std::errc() && p == v.data() + v.size() && n >= least
                   ? std::string()
                   : "a count (" + std::to_string(least) + " or more), not '" + v + "'";
      },
      "COUNT");
}

}  // namespace

// CLI::NonNegativeNumber lets "nan" through.
const CLI::Validator kPercent(
    [](std::string& v) -> std::string {
      double d = 0;
      try {
        size_t used = 0;
        d = std::stod(v, &used);
        if (used != v.size()) return "not a number: " + v;
      } catch (const std::exception&) { return "not a number: " + v; }
      return std::isfinite(d) && d >= 0 ? std::string() : "not a finite percentage >= 0: " + v;
    },
    "PCT");
const CLI::Validator kCount = count_at_least(0);
const CLI::Validator kPositiveCount = count_at_least(1);
const CLI::Validator kNonEmpty([](std::string& v) { return v.empty() ? std::string("an empty name") : std::string(); },
                               "FILE");

void add_shared_options(CLI::App* sub, unsigned which) {
  Shared& s = shared();
  // Where a call site is (allocator_frames.h).
  if (which & kCallSiteOptions) {
    sub->add_option("--allocator-frames", s.allocator_frames,
                    "A function-name regex of allocator frames to skip past to the call site (repeatable)");
    sub->add_flag("--no-allocator-skip", s.no_allocator_skip, "Call sites at the allocator's own frames");
  }
  // No verdict on incomplete figures unless asked (completeness.h).
  if (which & kAllowIncomplete)
    sub->add_flag("--allow-incomplete", s.allow_incomplete,
                  "Give a verdict on a trace whose figures are incomplete (damaged, cut, events dropped), saying so");
  // Files the commands write (output_file.h): a FIFO at the name without a reader.
  if (which & kForceOutput)
    sub->add_flag("--force", s.output_force,
                  "-o at a FIFO that no one reads yet: wait for a reader instead of refusing");
  // The call-site rule (call_site_rule.h).
  if (which & kCallSiteOptions) {
    sub->add_option("--call-site", s.call_site,
                    "user (the program's own Python line or native frame), native (Python aside), innermost")
        ->check(CLI::IsMember({"user", "native", "innermost"}));
    sub->add_option("--user-package", s.user_packages,
                    "A package under site-packages whose Python frames are the user's own (repeatable)");
  }
}

bool allow_incomplete() { return shared().allow_incomplete; }

int apply_shared_options() {
  const Shared& s = shared();
  CallSiteRule rule = CallSiteRule::kUser;
  parse_call_site_rule(s.call_site, rule);  // checked by CLI11
  set_call_site_rule(rule, s.user_packages);
  try {
    set_allocator_frames(s.allocator_frames, !s.no_allocator_skip);
  } catch (const std::invalid_argument& e) {
    std::cerr << "cumemtrace: --allocator-frames: not a regular expression: " << e.what() << "\n";
    return 2;
  }
  set_output_force(s.output_force);
  return 0;
}

void add_traces(CLI::App* sub, std::vector<std::string>& traces, const std::string& help) {
  sub->add_option("traces", traces, help)->required();
}

bool expand_inputs(std::vector<std::string>& args, const char* command) {
  const std::vector<std::string> given = args;
  args = expand_trace_inputs(given);
  if (args.empty()) std::cerr << "cumemtrace " << command << ": no trace found in " << printable(given.front()) << "\n";
  return !args.empty();
}

}  // namespace cumemtrace
