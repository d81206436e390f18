// `cumemtrace dump TRACE`: one line per record (dump.h), for debugging.
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <vector>

#include "cli/command.h"
#include "render/dump.h"
#include "base/escape.h"

namespace cumemtrace {
namespace {

int cmd_dump(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "cumemtrace dump: cannot read " << printable(path) << "\n";
    return 1;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (auto error = dump(std::cout, bytes)) {
    std::cerr << "cumemtrace dump: " << printable(path) << ": " << *error << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

Command register_dump(CLI::App& app) {
  const auto trace = std::make_shared<std::string>();
  Command c;
  c.sub = app.add_subcommand("dump", "One line per record (debugging; unstable format)");
  c.sub->add_option("trace", *trace, "Trace file")->required();
  c.run = [trace] { return cmd_dump(*trace); };
  return c;
}

}  // namespace cumemtrace
