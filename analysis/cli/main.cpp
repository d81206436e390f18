// The `cumemtrace` command line: the commands in the order `cumemtrace --help` lists them,
// and the dispatch. Each command's options and entry point are in its own file (command.h).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <new>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "base/escape.h"
#include "cli/nearest_name.h"
#include "cli/unknown_option.h"

using namespace cumemtrace;

namespace {

// In the order of `cumemtrace --help` and of the list a mistyped command is answered with.
Command (*const kCommands[])(CLI::App&) = {
    register_run,      register_report, register_live,   register_index, register_symbolize, register_check,
    register_baseline, register_diff,   register_export, register_html,  register_dump,
};

int dispatch(int argc, char** argv) {
  CLI::App app{"cumemtrace: who holds the CUDA device memory, where, and why an allocation failed"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("cumemtrace ") + CUMEMTRACE_VERSION);
  std::vector<Command> commands;
  for (const auto add : kCommands) commands.push_back(add(app));

  if (argc >= 2) {
    for (const Command& c : commands)
      if (c.parse_by_hand && c.sub->get_name() == argv[1]) return c.parse_by_hand(argc, argv);
  }
  if (argc >= 2 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const Command& c : commands) names.push_back(c.sub->get_name());
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      std::cerr << "cumemtrace: '" << printable(argv[1]) << "' is not a command" << did_you_mean(argv[1], names)
                << "\n(commands: ";
      for (size_t i = 0; i < names.size(); ++i) std::cerr << (i ? ", " : "") << names[i];
      std::cerr << "; `cumemtrace --help` says more)\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A mistyped option is the cause of whatever CLI11 says next (a value taken for a
    // trace, a required trace missing): said first, with the option meant.
    if (e.get_exit_code() != 0 && argc >= 2)
      for (const Command& c : commands)
        if (c.sub->get_name() == argv[1])
          if (const std::string said = unknown_option(app, *c.sub, argc, argv); !said.empty()) {
            std::cerr << said;
            return 2;
          }
    // --help and --version end the same way; CLI11 gives them 0, every real usage
    // error its own code above 100. docs/cli.md promises 2 for all usage errors.
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  const auto chosen = std::find_if(commands.begin(), commands.end(), [](const Command& c) { return bool(*c.sub); });
  if (chosen == commands.end()) return 0;
  if (chosen->check_usage)
    if (const int status = chosen->check_usage()) return status;
  if (const int status = apply_shared_options()) return status;
  return chosen->run();
}

}  // namespace

// No exception leaves the CLI (docs/cli.md, exit status): whatever a command did not
// catch ends it with one line on stderr and status 1.
int main(int argc, char** argv) {
  try {
    return dispatch(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "cumemtrace: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "cumemtrace: " << printable(e.what()) << "\n";
    return 1;
  }
}
