#include "resolve/framework_version.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <string_view>

#include "base/errno_guard.h"
#include "base/loader_lock.h"

namespace cumemtrace::interpose {

std::string torch_version_of(const void* fn) {
  const ErrnoGuard keep_errno;
  std::string path;
  {
    const LoaderUse in_loader;
    Dl_info info{};
    if (!fn || !dladdr(fn, &info) || !info.dli_fname) return {};
    path = info.dli_fname;
  }
  const size_t lib = path.rfind("/lib/");
  if (lib == std::string::npos) return {};
  path.replace(lib, std::string::npos, "/version.py");
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return {};
  char buf[4096];
  const ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  if (n <= 0) return {};
  // A line that starts `__version__` (`__version__ = '2.11.0+cu130'`, or with a type
  // annotation or double quotes); the first one wins. `__all__` names it too, quoted.
  const std::string_view text(buf, size_t(n));
  size_t at = text.starts_with("__version__") ? 0 : text.find("\n__version__");
  if (at == std::string_view::npos) return {};
  if (text[at] == '\n') ++at;
  const size_t open_quote = text.find_first_of("'\"", at);
  if (open_quote == std::string_view::npos || text.substr(at, open_quote - at).find('\n') != std::string_view::npos)
    return {};
  const size_t close_quote = text.find(text[open_quote], open_quote + 1);
  if (close_quote == std::string_view::npos || close_quote - open_quote > 64) return {};
  const std::string_view version = text.substr(open_quote + 1, close_quote - open_quote - 1);
  for (const char c : version)
    if (c < 0x20 || c > 0x7e) return {};
  return std::string(version);
}

}  // namespace cumemtrace::interpose
