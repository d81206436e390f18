#include "base/option_file.h"

#include <fstream>

#include "base/units.h"

namespace cumemtrace {

std::optional<std::string> read_option_file(const std::string& path, std::string& why, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = "cannot be read";
    return std::nullopt;
  }
  // One byte past the limit tells a file of exactly `limit` bytes from a longer one.
  std::string text(limit + 1, '\0');
  in.read(text.data(), std::streamsize(text.size()));
  if (in.bad()) {
    why = "cannot be read";
    return std::nullopt;
  }
  text.resize(size_t(in.gcount()));
  if (text.size() > limit) {
    why = "larger than " + iec(limit) + ", the most an option file may hold";
    return std::nullopt;
  }
  return text;
}

}  // namespace cumemtrace
