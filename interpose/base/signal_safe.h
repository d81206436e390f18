// What a fatal signal's handler may do with our state: only async-signal-safe calls.
// A glibc mutex's try_lock is one atomic compare-and-swap (no futex wait, no allocation),
// which is why the handler takes locks only that way, and never waits unbounded: the
// thread that crashed may be the one holding the lock.
#pragma once

#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace cumemtrace::interpose {

inline void sleep_one_ms() {
  const timespec one_ms{0, 1'000'000};
  nanosleep(&one_ms, nullptr);
}

template <class Mutex>
bool try_lock_for_a_second(Mutex& mu) {
  for (int ms = 0; ms < 1000; ++ms) {
    if (mu.try_lock()) return true;
    sleep_one_ms();
  }
  return false;
}

// write(2) until done or failed; nothing else.
inline bool write_all_signal_safe(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(size_t(n));
  }
  return true;
}

}  // namespace cumemtrace::interpose
