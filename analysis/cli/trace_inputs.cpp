#include "cli/trace_inputs.h"

#include "cumemtrace/rules/manifest_line.h"
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

bool trace_file_name(const std::string& name) {
  const size_t at = name.rfind(".trace");
  if (at == std::string::npos || at == 0) return false;
  const std::string_view rest = std::string_view(name).substr(at + 6);
  if (rest.empty()) return true;
  return rest.size() >= 2 && rest[0] == '.' &&
         std::all_of(rest.begin() + 1, rest.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> read_manifest(const std::string& path) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#' && seen.insert(line).second) out.push_back(manifest::unescape_path(line));
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
      // A folder that cannot be read whole is said, as an unreadable trace is: not skipped.
      std::filesystem::recursive_directory_iterator it(arg, std::filesystem::directory_options::none, ec), end;
      for (; !ec && it != end; it.increment(ec)) {
        const auto& e = *it;
        std::error_code entry;                    // a file gone since it was listed is no trace
        if (!e.is_regular_file(entry)) continue;  // a link to a trace is read (never written)
        const std::string p = e.path().string();
        if (trace_file_name(e.path().filename().string()) || head(p, magic.size()) == magic) found.push_back(p);
      }
      if (ec) found.push_back(arg);  // the reader then says why it cannot be read
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
