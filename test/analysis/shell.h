// Test-only: runs a shell command line and collects its stdout and exit status.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

namespace cumemtrace::test {

// The `cumemtrace` command line tool this tree built.
inline const std::string kCli = CUMEMTRACE_CLI;

struct Result {
  int status = -1;
  std::string out;
};

inline Result shell(const std::string& cmd) {
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace cumemtrace::test
