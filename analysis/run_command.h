// `cumemtrace run`: start a command under LD_PRELOAD=libcumemtrace.so, wait for it, then
// symbolize the traces it wrote, on this machine, while the modules' files are here.
//
// Which traces: every traced process (the command and any child it starts, each writes
// its own trace) appends its trace's absolute path to a private manifest file named by
// CUMEMTRACE_MANIFEST. Reading that file is the only reliable way to find them: output
// patterns expand per pid and rank, and children may chdir.
//
// Nothing is printed to stdout: the command's stdout belongs to the user.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cumemtrace {

struct RunOptions {
  std::optional<std::string> output;  // CUMEMTRACE_OUTPUT pattern
  std::optional<int> depth;           // CUMEMTRACE_DEPTH
  std::vector<std::string> command;
};

// The preload library beside this executable (<bin>/../lib/libcumemtrace.so), or
// $CUMEMTRACE_LIBRARY.
std::string preload_library_path();

// Returns the exit status to exit with: the command's, or 128+signal if a signal
// killed it; 127 if it could not be started.
int run_traced(const RunOptions& opt);

}  // namespace cumemtrace
