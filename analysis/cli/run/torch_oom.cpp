#include "cli/run/torch_oom.h"

#include <stdlib.h>

#include <filesystem>
#include <iostream>
#include <system_error>

namespace cumemtrace {

std::string torch_oom_python_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (const fs::path& dir :
       {exe_dir / ".." / "share" / "cumemtrace" / "python", fs::path(CUMEMTRACE_SOURCE_PYTHON_DIR)})
    if (fs::is_regular_file(dir / "sitecustomize.py", ec) && fs::is_directory(dir / "cumemtrace", ec))
      return fs::weakly_canonical(dir, ec).string();
  return {};
}

bool enable_torch_oom() {
  const std::string dir = torch_oom_python_dir();
  if (dir.empty()) {
    std::cerr << "cumemtrace run: --torch-oom: the Python package (share/cumemtrace/python beside the "
                 "installed cumemtrace) is missing\n";
    return false;
  }
  const char* old = ::getenv("PYTHONPATH");
  const std::string path = old && *old ? dir + ":" + old : dir;
  ::setenv("PYTHONPATH", path.c_str(), 1);
  return true;
}

}  // namespace cumemtrace
