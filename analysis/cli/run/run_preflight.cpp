#include "cli/run/run_preflight.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "base/output_file.h"

namespace cumemtrace {
namespace {

// Why `path` cannot be executed, or "" when it can.
std::string why_not_executable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (::access(path.c_str(), X_OK) != 0) return std::strerror(errno);
  return "";
}

}  // namespace

std::string why_not_runnable(const std::string& name) {
  if (name.empty()) return "an empty command name";
  if (name.find('/') != std::string::npos) return why_not_executable(name);
  // execvp's search: each PATH entry in turn (an empty entry is the current folder); with
  // PATH unset, glibc's default.
  const char* env = std::getenv("PATH");
  std::stringstream path(env ? env : "/bin:/usr/bin");
  std::string first_refusal;
  for (std::string dir; std::getline(path, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    const std::string why = why_not_executable(candidate);
    if (why.empty()) return "";
    if (first_refusal.empty() && ::access(candidate.c_str(), F_OK) == 0) first_refusal = why;
  }
  return first_refusal.empty() ? "command not found" : first_refusal;
}

std::string make_output_folder(const std::string& output) {
  const size_t slash = output.rfind('/');
  if (slash == std::string::npos || slash == 0) return "";
  const std::string folder = output.substr(0, slash);
  if (folder.find('%') != std::string::npos) return "";
  std::string error;
  return make_output_directory(folder, &error, /*itself_may_be_link=*/true) ? "" : error;
}

}  // namespace cumemtrace
