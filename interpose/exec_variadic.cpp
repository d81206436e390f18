// execl, execlp and execle: libc implements them with its internal execve, past any
// interposition, so they are hooked here, by hand, because hook_table.def cannot list
// functions with variable arguments. Each collects its arguments as libc does and calls
// the (hooked) vector form, which flushes the trace and execs.
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <vector>

namespace {

// argv from `first` and the NULL-terminated list after it; `after` gets what follows
// the NULL (execle's envp).
std::vector<char*> collect(const char* first, va_list ap, char*** after = nullptr) {
  std::vector<char*> argv{const_cast<char*>(first)};
  while (argv.back()) argv.push_back(va_arg(ap, char*));
  if (after) *after = va_arg(ap, char**);
  return argv;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = collect(arg, ap);
  va_end(ap);
  return execv(path, argv.data());
}

extern "C" __attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = collect(arg, ap);
  va_end(ap);
  return execvp(file, argv.data());
}

extern "C" __attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  char** envp = nullptr;
  std::vector<char*> argv = collect(arg, ap, &envp);
  va_end(ap);
  return execve(path, argv.data(), envp);
}
