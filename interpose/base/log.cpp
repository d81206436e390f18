#include "base/log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <new>

#include "base/config.h"

namespace cumemtrace::interpose {

spdlog::logger& logger() {
  static spdlog::logger* instance = [] {
    // Deliberately leaked: see log.h. Not registered with spdlog's registry, whose
    // static destructor would run before late hooks.
    auto* l = new spdlog::logger("cumemtrace", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_pattern("cumemtrace[%P]: %l: %v");  // %P: getpid() per line, right in a fork child too
    l->set_level(spdlog::level::from_str(config().log_level));
    return l;
  }();
  return *instance;
}

// spdlog's stderr sinks share one mutex (details::console_mutex): a thread of the parent
// logging at the fork left it held in the child, whose first warning then waited forever.
// The child has one thread: start the mutex afresh.
void log_after_fork_child() { new (&spdlog::details::console_mutex::mutex()) spdlog::details::console_mutex::mutex_t; }

}  // namespace cumemtrace::interpose
