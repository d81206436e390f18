// Logging to stderr through spdlog (never stdout: the program's stdout is not ours).
// Level from CUMEMTRACE_LOG (off, error, warn, info, debug, trace; default warn).
// The logger is created once and never destroyed, so a hook running after our
// destructors (exit order) can still log safely.
#pragma once

#include <spdlog/spdlog.h>

#include <atomic>
#include <utility>

namespace cumemtrace::interpose {

spdlog::logger& logger();

// In a forked child: the sink's lock afresh (a parent thread may have held it at the fork).
void log_after_fork_child();

template <class... A>
void log_warn(spdlog::format_string_t<A...> f, A&&... a) {
  logger().warn(f, std::forward<A>(a)...);
}
template <class... A>
void log_info(spdlog::format_string_t<A...> f, A&&... a) {
  logger().info(f, std::forward<A>(a)...);
}
template <class... A>
void log_debug(spdlog::format_string_t<A...> f, A&&... a) {
  logger().debug(f, std::forward<A>(a)...);
}

// Warns the first time a given call site is reached; later ones stay quiet so a
// failing condition in a hot hook cannot flood stderr.
#define log_once_warn(...)                                                                  \
  do {                                                                                      \
    static std::atomic<bool> cumemtrace_warned_{false};                                     \
    if (!cumemtrace_warned_.exchange(true)) ::cumemtrace::interpose::log_warn(__VA_ARGS__); \
  } while (0)

}  // namespace cumemtrace::interpose
