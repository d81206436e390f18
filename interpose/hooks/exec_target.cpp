#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "hooks/hooks_exec.h"

namespace cumemtrace::interpose {

std::string_view exec_target(int dirfd, const char* path, int flags, char (&buf)[PATH_MAX + 32]) {
  if (!path) path = "";
  if (path[0] == '/' || (dirfd == AT_FDCWD && path[0])) return path;
  const int saved_errno = errno;
  char link[48];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
  const ssize_t n = readlink(link, buf, PATH_MAX);
  size_t used = n > 0 ? size_t(n) : size_t(std::snprintf(buf, sizeof buf, "fd %d", dirfd));
  errno = saved_errno;
  (void)flags;  // AT_EMPTY_PATH matters only with an empty path, which adds nothing
  if (path[0]) {
    const int k = std::snprintf(buf + used, sizeof buf - used, "/%s", path);
    used = k < 0 ? used : std::min(used + size_t(k), sizeof buf - 1);
  }
  return {buf, used};
}

}  // namespace cumemtrace::interpose
