// `cumemtrace dump TRACE`: one line per record (dump.h), for debugging.
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

#include "commands.h"
#include "dump.h"
#include "escape.h"

namespace cumemtrace {

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

}  // namespace cumemtrace
