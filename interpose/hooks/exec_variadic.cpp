// execl, execlp and execle: libc implements them with its internal execve, past any
// interposition, so they are hooked here, by hand, because hook_table.def cannot list
// functions with variable arguments. Each collects its arguments as libc does and calls
// the (hooked) vector form, which flushes the trace and execs.
//
// The argument vector lives on the stack, never the heap: these run in vfork children
// (CPython's subprocess), where a malloc takes from the parent's heap and is never given
// back (owner.h).
#include <alloca.h>
#include <unistd.h>

#include <cstdarg>

namespace {

// Arguments after `first` up to and including the terminating NULL (none after a NULL first).
size_t count_after(const char* first, va_list ap) {
  if (!first) return 0;
  va_list copy;
  va_copy(copy, ap);
  size_t n = 1;
  while (va_arg(copy, char*)) ++n;
  va_end(copy);
  return n;
}

// Fills argv from `first` and the NULL-terminated list after it; returns what follows
// the NULL when `envp_follows` (execle's envp).
char** fill(char** argv, const char* first, va_list ap, bool envp_follows) {
  size_t i = 0;
  argv[i] = const_cast<char*>(first);
  while (argv[i]) argv[++i] = va_arg(ap, char*);
  return envp_follows ? va_arg(ap, char**) : nullptr;
}

}  // namespace

// alloca must run in the caller's frame, hence a macro: the vector outlives the call below.
#define COLLECT(argv, first, envp_follows, envp)                                           \
  va_list ap;                                                                              \
  va_start(ap, first);                                                                     \
  char** argv = static_cast<char**>(alloca((count_after(first, ap) + 1) * sizeof(char*))); \
  char** envp = fill(argv, first, ap, envp_follows);                                       \
  va_end(ap)

extern "C" __attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  COLLECT(argv, arg, false, unused);
  (void)unused;
  return execv(path, argv);
}

extern "C" __attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  COLLECT(argv, arg, false, unused);
  (void)unused;
  return execvp(file, argv);
}

extern "C" __attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  COLLECT(argv, arg, true, envp);
  return execve(path, argv, envp);
}
