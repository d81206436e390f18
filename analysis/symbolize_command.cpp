// `cumemtrace symbolize`: docs/cli.md.
#include <iostream>

#include "commands.h"
#include "symbolize.h"

namespace cumemtrace {

int cmd_symbolize(const std::vector<std::string>& paths) {
  int rc = 0;
  for (const auto& path : paths) {
    SymbolizeFileResult r = symbolize_file(path);
    if (!r.ok) {
      std::cerr << "cumemtrace: " << path << ": " << r.message << "\n";
      rc = 1;
    } else if (r.already) {
      std::cerr << "cumemtrace: " << path << ": already symbolized\n";
    } else {
      std::cerr << "cumemtrace: " << path << ": " << r.appended << " of " << r.stats.ips << " ips symbolized";
      if (r.stats.modules_missing) std::cerr << ", " << r.stats.modules_missing << " module files missing";
      if (r.stats.modules_mismatch) std::cerr << ", " << r.stats.modules_mismatch << " modules with another build-id";
      if (r.cut_partial) std::cerr << "; partial last record cut off";
      std::cerr << "\n";
    }
  }
  return rc;
}

}  // namespace cumemtrace
