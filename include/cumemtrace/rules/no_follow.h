// Opening the directory an output file goes in without following links, for the CLI's
// output files (analysis/base/output_file.h) and the library's trace file (interpose/write/trace_file.cpp).
// A symlink planted at, or above, an output name must not send the bytes elsewhere: a link
// to /proc/self/root/<path>/file reaches any file the user can write, however the link's
// own text looks. openat2(RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) refuses every link
// in the kernel's own walk (Linux 5.6 and later; called directly, glibc 2.36 has no wrapper);
// older kernels get the same walk done here, one component at a time with O_NOFOLLOW.
// Header-only and without allocation-heavy dependencies: the preload library links nothing new.
#pragma once

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

namespace cumemtrace::no_follow {

// Which links a path's directory part may go through. Neither ever goes through a link
// inside /proc (a "magic" link such as /proc/self/root or /proc/self/fd/N) nor ends at one.
enum class DirLinks {
  kNone,      // no link anywhere
  kOrdinary,  // ordinary links, as a cluster's /scratch often is (the CLI's -o, the library's trace file)
};

// A path split at its last '/': "a/b" -> {"a", "b"}, "b" -> {".", "b"}, "/b" -> {"/", "b"};
// a trailing '/' leaves `name` empty ("a/" -> {"a", ""}).
struct Split {
  std::string dir;
  std::string name;
};
inline Split split(std::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return {".", std::string(path)};
  return {slash == 0 ? std::string("/") : std::string(path.substr(0, slash)), std::string(path.substr(slash + 1))};
}

namespace detail {

constexpr long kProcSuperMagic = 0x9fa0;  // PROC_SUPER_MAGIC (linux/magic.h)

inline bool on_procfs(int fd) {
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && fs.f_type == kProcSuperMagic;
}

// Walks `path` from `at` one component at a time; `links` counts the links expanded so
// far (40 at most, as the kernel allows). Takes ownership of `at`.
inline int walk(int at, std::string_view path, DirLinks links, int& expanded) {
  if (!path.empty() && path.front() == '/') {
    ::close(at);
    at = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (at < 0) return -1;
  }
  while (!path.empty()) {
    const size_t slash = path.find('/');
    const std::string name(path.substr(0, slash));
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
    if (name.empty() || name == ".") continue;
    const int next = ::openat(at, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next >= 0) {
      ::close(at);
      at = next;
      continue;
    }
    struct stat st {};
    const bool link = (errno == ELOOP || errno == ENOTDIR) &&
                      ::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
    if (!link || links == DirLinks::kNone || on_procfs(at) || ++expanded > 40) {
      const int e = link ? ELOOP : errno;
      ::close(at);
      return errno = e, -1;
    }
    char text[4096];
    const ssize_t n = ::readlinkat(at, name.c_str(), text, sizeof text);
    if (n <= 0 || size_t(n) == sizeof text) {
      ::close(at);
      return errno = ELOOP, -1;
    }
    const std::string rest = std::string(text, size_t(n)) + "/" + std::string(path);
    return walk(at, rest, links, expanded);
  }
  if (on_procfs(at)) {  // an output under /proc is never a file of ours
    ::close(at);
    return errno = ELOOP, -1;
  }
  return at;
}

}  // namespace detail

// An O_PATH descriptor of directory `dir` (relative to the current directory unless it
// starts with '/'), reached without following the links `links` forbids; -1 with errno
// (ELOOP: a link was met) otherwise. The caller closes it.
inline int open_dir(const std::string& dir, DirLinks links) {
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_MAGICLINKS | (links == DirLinks::kNone ? RESOLVE_NO_SYMLINKS : 0);
  const long fd = ::syscall(SYS_openat2, AT_FDCWD, dir.c_str(), &how, sizeof how);
  if (fd >= 0) {
    if (!detail::on_procfs(int(fd))) return int(fd);
    ::close(int(fd));
    return errno = ELOOP, -1;
  }
  if (errno != ENOSYS && errno != EPERM) return -1;  // EPERM: a seccomp filter that does not know openat2
  const int cwd = ::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cwd < 0) return -1;
  int expanded = 0;
  return detail::walk(cwd, dir, links, expanded);
}

// The component-by-component walk alone, whatever the kernel has (for tests of old kernels).
inline int open_dir_by_components(const std::string& dir, DirLinks links) {
  const int cwd = ::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cwd < 0) return -1;
  int expanded = 0;
  return detail::walk(cwd, dir, links, expanded);
}

}  // namespace cumemtrace::no_follow
