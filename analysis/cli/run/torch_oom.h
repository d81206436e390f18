// `cumemtrace run --torch-oom`: PyTorch's block map at an out-of-memory error, without
// changing the program. The command gets python/sitecustomize.py on PYTHONPATH; it
// attaches PyTorch's OOM observer (python/cumemtrace/torch.py) once the program imports
// torch, then runs the sitecustomize it shadows, so the user's own still runs.
#pragma once

#include <string>

namespace cumemtrace {

// The directory holding sitecustomize.py and the cumemtrace package: installed,
// <dir of cumemtrace>/../share/cumemtrace/python; in the build tree, the source tree's
// python/. Empty when neither has them.
std::string torch_oom_python_dir();

// Prepends that directory to PYTHONPATH (kept otherwise as the user has it) for the
// command about to run. False, with a message on stderr, when it cannot be found.
bool enable_torch_oom();

}  // namespace cumemtrace
