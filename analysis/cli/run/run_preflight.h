// What `run` checks before it starts anything, so that a mistake is said at once rather
// than after a job that could not trace: the command can be run (as execvp would find
// it), and -o's folder exists (it is created when missing; the library cannot create it
// and would only warn inside the job).
#pragma once

#include <string>

namespace cumemtrace {

// Empty when execvp(name) would find an executable file; otherwise why not, in the
// shell's words ("command not found", "Permission denied", "is a directory").
std::string why_not_runnable(const std::string& name);

// Creates the folder of the trace-file pattern `output` (with its parents) when it is
// missing. A folder whose name holds a '%' is expanded per process by the library and is
// left alone. Empty on success; otherwise why the folder cannot be had.
std::string make_output_folder(const std::string& output);

}  // namespace cumemtrace
