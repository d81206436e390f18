// A `cumemtrace` command, one file each: register_X adds its subcommand and options to
// the CLI11 app and returns what runs it once the command line is parsed. main.cpp lists
// the registrations in the order `cumemtrace --help` shows them (an explicit list: objects
// that only registered themselves would be dropped from the static library by the linker).
// docs/cli.md is the user's description; keep the two in step.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>  // the registrations hold their options in a shared_ptr the run function keeps
#include <string>
#include <vector>

namespace cumemtrace {

struct Command {
  CLI::App* sub = nullptr;
  // Parses its own arguments (argv[1] is the verb) instead of CLI11; then `sub` is only for --help.
  std::function<int(int argc, char** argv)> parse_by_hand;
  // Right after parsing, before the shared options take effect: a usage error's exit
  // status (its message printed), or 0.
  std::function<int()> check_usage;
  std::function<int()> run;  // the exit status; an exception is reported by main (status 1)
};

Command register_run(CLI::App& app);
Command register_report(CLI::App& app);
Command register_live(CLI::App& app);
Command register_index(CLI::App& app);
Command register_symbolize(CLI::App& app);
Command register_check(CLI::App& app);
Command register_baseline(CLI::App& app);
Command register_diff(CLI::App& app);
Command register_export(CLI::App& app);
Command register_html(CLI::App& app);
Command register_dump(CLI::App& app);

// Options more than one command takes (command_options.cpp), added after a command's own
// so that every --help lists them in one order.
enum SharedOption : unsigned {
  kCallSiteOptions = 1,  // --allocator-frames, --no-allocator-skip, --call-site, --user-package
  kAllowIncomplete = 2,  // --allow-incomplete (completeness.h)
  kForceOutput = 4,      // --force (output_file.h)
};
void add_shared_options(CLI::App* sub, unsigned which);
// --allow-incomplete as given.
bool allow_incomplete();
// Puts the shared options into effect, whichever command was given: 0, or 2 for a usage error.
int apply_shared_options();

// The required positional "traces" of a command that reads them.
void add_traces(CLI::App* sub, std::vector<std::string>& traces,
                const std::string& help = "Trace files, folders of traces, or a `run` manifest");
// Traces, folders of traces or manifests as the traces they name (trace_inputs.h); false,
// with a message, when they name none.
bool expand_inputs(std::vector<std::string>& args, const char* command);

// CLI11 names the option in the message: "--top: a count (0 or more), not '-1'".
extern const CLI::Validator kPercent;        // a finite number >= 0
extern const CLI::Validator kCount;          // 0 or more
extern const CLI::Validator kPositiveCount;  // 1 or more
extern const CLI::Validator kNonEmpty;       // a file name

}  // namespace cumemtrace
