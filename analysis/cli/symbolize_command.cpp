// `cumemtrace symbolize`: docs/cli.md.
#include <iostream>

#include "base/escape.h"
#include "base/plural.h"
#include "cli/command.h"
#include "symbols/symbolize.h"

namespace cumemtrace {
namespace {

int cmd_symbolize(const std::vector<std::string>& paths) {
  int rc = 0;
  for (const auto& path : paths) {
    SymbolizeFileResult r = symbolize_file(path);
    if (!r.ok) {
      std::cerr << "cumemtrace: " << printable(path) << ": " << printable(r.message) << "\n";
      rc = 1;
    } else if (r.already) {
      std::cerr << "cumemtrace: " << printable(path) << ": already symbolized\n";
    } else {
      std::cerr << "cumemtrace: " << printable(path) << ": " << r.appended << " of " << r.stats.ips
                << " ips symbolized";
      if (r.stats.modules_missing) std::cerr << ", " << count_of(r.stats.modules_missing, "module file") << " missing";
      if (r.stats.modules_mismatch)
        std::cerr << ", " << count_of(r.stats.modules_mismatch, "module") << " with another build-id";
      if (r.cut_partial) std::cerr << "; partial last record cut off";
      std::cerr << "\n";
    }
  }
  return rc;
}

}  // namespace

Command register_symbolize(CLI::App& app) {
  const auto traces = std::make_shared<std::vector<std::string>>();
  Command c;
  c.sub = app.add_subcommand("symbolize", "Append symbols to traces (needs the modules' files)");
  add_traces(c.sub, *traces);
  c.run = [traces] { return expand_inputs(*traces, "symbolize") ? cmd_symbolize(*traces) : 1; };
  return c;
}

}  // namespace cumemtrace
