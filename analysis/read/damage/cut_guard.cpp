#include "read/damage/cut_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace cumemtrace {
namespace {

struct Slot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> cut{false};
};
// One per trace mapped at once: `report` maps one per trace, read by at most one thread per core.
Slot g_slots[256];
uintptr_t g_page = 4096;
struct sigaction g_previous;
std::once_flag g_installed;

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& s : g_slots) {
    const uintptr_t begin = s.begin.load(std::memory_order_acquire), end = s.end.load(std::memory_order_acquire);
    if (!begin || at < begin || at >= end) continue;
    // mmap is not on POSIX's async-signal-safe list, but it is a plain system call here,
    // made from a synchronous fault on this very thread.
    const uintptr_t from = at & ~(g_page - 1);
    if (::mmap(reinterpret_cast<void*>(from), end - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
        MAP_FAILED) {
      s.cut.store(true, std::memory_order_release);
      return;  // the read is retried, and reads zeros
    }
    break;
  }
  // Not ours (or not mendable): the previous disposition, and the fault happens again.
  if (g_previous.sa_flags & SA_SIGINFO && g_previous.sa_sigaction) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  ::sigaction(SIGBUS, &g_previous, nullptr);
}

void install() {
  g_page = uintptr_t(::sysconf(_SC_PAGESIZE));
  struct sigaction sa {};
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, &g_previous);
}

}  // namespace

int guard_mapping(const void* data, size_t size) {
  std::call_once(g_installed, install);
  for (int i = 0; i < int(std::size(g_slots)); ++i) {
    uintptr_t free = 0;
    if (g_slots[i].begin.compare_exchange_strong(free, 1)) {  // 1: taken, not yet armed
      g_slots[i].cut.store(false);
      g_slots[i].end.store(reinterpret_cast<uintptr_t>(data) + size, std::memory_order_release);
      g_slots[i].begin.store(reinterpret_cast<uintptr_t>(data), std::memory_order_release);
      return i;
    }
  }
  return -1;
}

bool mapping_cut(int slot) { return slot >= 0 && g_slots[slot].cut.load(std::memory_order_acquire); }

void unguard_mapping(int slot) {
  if (slot < 0) return;
  g_slots[slot].end.store(0, std::memory_order_release);
  g_slots[slot].begin.store(0, std::memory_order_release);
}

}  // namespace cumemtrace
