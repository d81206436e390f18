#include "trace_inputs.h"

#include <cumemtrace/trace_format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <sys/stat.h>

namespace cumemtrace {
namespace {

std::string head(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string s(n, '\0');
  in.read(s.data(), std::streamsize(n));
  s.resize(size_t(in.gcount()));
  return s;
}

}  // namespace

std::vector<std::string> read_manifest(const std::string& path) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#' && seen.insert(line).second) out.push_back(line);
  return out;
}

std::vector<std::string> expand_trace_inputs(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  // Each file once, however it is named (./a, a, dir/../a, a hard link): counted twice,
  // one process would be two in the job view, and its peaks summed on its GPU.
  std::set<std::string> seen;
  auto add = [&](const std::string& p) {
    struct stat st;
    const std::string key =
        ::stat(p.c_str(), &st) == 0 ? std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) : "path:" + p;
    if (seen.insert(key).second) out.push_back(p);
  };
  const std::string magic(format::kMagic, sizeof format::kMagic);
  for (const auto& arg : args) {
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::string> found;
      for (const auto& e : std::filesystem::directory_iterator(arg, ec))
        if (e.is_regular_file(ec) && head(e.path().string(), magic.size()) == magic) found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      for (const auto& p : found) add(p);
    } else if (std::filesystem::is_regular_file(arg, ec) &&  // a FIFO is not read here: it would wait
               head(arg, format::kManifestMarker.size()) == format::kManifestMarker) {
      for (const auto& p : read_manifest(arg)) add(p);
    } else {
      add(arg);
    }
  }
  return out;
}

}  // namespace cumemtrace
