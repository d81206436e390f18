#include "base/owner.h"

#include <unistd.h>

#include <atomic>

namespace cumemtrace::interpose {
namespace {

std::atomic<pid_t> g_owner{0};

}  // namespace

void own_this_process() { g_owner.store(getpid(), std::memory_order_relaxed); }

bool in_borrowed_memory() {
  const pid_t owner = g_owner.load(std::memory_order_relaxed);
  return owner != 0 && owner != getpid();
}

}  // namespace cumemtrace::interpose
