#include "base/progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace cumemtrace {
namespace {

thread_local ProgressScope* current = nullptr;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t silent_for_ns() {
  if (const char* v = std::getenv("CUMEMTRACE_PROGRESS_AFTER_MS"); v && *v) return std::atoll(v) * 1000000;
  return 1000000000;
}

}  // namespace

ProgressScope::ProgressScope(std::string command)
    : command_(std::move(command)), start_ns_(now_ns()), after_ns_(silent_for_ns()), next_line_ns_(0),
      tty_(::isatty(STDERR_FILENO) == 1) {
  if (!current) current = this;
}

ProgressScope::~ProgressScope() {
  if (current == this) current = nullptr;
  clear();
}

void ProgressScope::clear() {
  if (drawn_ && tty_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

void ProgressScope::report(const char* stage, uint64_t done, uint64_t total) {
  const int64_t now = now_ns();
  if (now - start_ns_ < after_ns_) return;
  const unsigned pct = total ? unsigned(done * 100 / total) : 0;
  if (tty_) {
    constexpr int kWidth = 30;
    const int filled = int(pct * kWidth / 100);
    std::fprintf(stderr, "\r%s: %-9s [%.*s%*s] %3u%%", command_.c_str(), stage, filled,
                 "##############################", kWidth - filled, "", pct);
    std::fflush(stderr);
    drawn_ = true;
    return;
  }
  // A log, not a terminal: a line when a stage starts, then every 5 s.
  if (now < next_line_ns_ && last_stage_ == stage) return;
  std::fprintf(stderr, "%s: %s %u%%\n", command_.c_str(), stage, pct);
  last_stage_ = stage;
  next_line_ns_ = now + 5000000000;
  drawn_ = true;
}

void progress(const char* stage, uint64_t done, uint64_t total) {
  if (current) current->report(stage, done, total);
}

}  // namespace cumemtrace
