#include "base/temporaries.h"

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace cumemtrace {
namespace {

// Read by the signal handler: fixed storage, and a slot's path is complete before its
// state says kReady (release), so the handler never unlinks half a name.
enum State : int { kFree, kClaimed, kReady };
struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};
constexpr int kSlots = 64;
Slot g_slots[kSlots];
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

void on_signal(int sig) {
  const int saved = errno;
  for (Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == kReady) ::unlink(s.path);
  ::signal(sig, SIG_DFL);
  errno = saved;
  ::raise(sig);  // delivered when the handler returns: the process ends by this signal
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : kSignals) {
      struct sigaction old {};
      // A signal the CLI was started with ignored (nohup) stays ignored.
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
      struct sigaction sa {};
      sa.sa_handler = on_signal;
      sigemptyset(&sa.sa_mask);
      for (int other : kSignals) sigaddset(&sa.sa_mask, other);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

}  // namespace

int register_temporary(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  install_once();
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kClaimed, std::memory_order_acq_rel)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(kReady, std::memory_order_release);
    return i;
  }
  return -1;
}

void unregister_temporary(int slot) {
  if (slot >= 0 && slot < kSlots) g_slots[slot].state.store(kFree, std::memory_order_release);
}

}  // namespace cumemtrace
