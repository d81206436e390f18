#include "cli/unknown_option.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "base/escape.h"
#include "cli/nearest_name.h"

namespace cumemtrace {

std::string unknown_option(const CLI::App& app, const CLI::App& command, int argc, char** argv) {
  // Compared without the dashes: two of them would let a far word count as near.
  std::vector<std::string> names;
  for (const CLI::App* a : {&command, &app})
    for (const CLI::Option* o : a->get_options())
      for (const auto& n : o->get_lnames()) names.push_back(n);
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (!arg.starts_with("--")) continue;
    const std::string name(arg.substr(2, arg.find('=') - 2));
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    const std::string& verb = command.get_name();
    const std::string near = nearest_name(name, names);
    return "cumemtrace " + verb + ": '--" + printable(name) + "' is not an option of " + verb +
           (near.empty() ? "" : "; did you mean '--" + near + "'?") + "\n(`cumemtrace " + verb +
           " --help` lists its options)\n";
  }
  return "";
}

}  // namespace cumemtrace
