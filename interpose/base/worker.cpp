#include "base/worker.h"

#include <pthread.h>
#include <signal.h>

namespace cumemtrace::interpose {

void* Worker::run(void* self) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  auto& w = *static_cast<Worker*>(self);
  w.loop_(w);
  return nullptr;
}

bool Worker::start(void (*loop)(Worker&)) {
  loop_ = loop;
  busy_ = true;  // until its first wait: a fork meanwhile waits for it as for a round
  pthread_t thread;
  if (pthread_create(&thread, nullptr, run, this) != 0) {
    busy_ = false;
    return false;
  }
  pthread_detach(thread);
  return true;
}

void Worker::round_over() {
  busy_ = false;
  idle_.notify_all();
}

void Worker::prepare_fork() {
  std::unique_lock lock(mu);
  forking_ = true;
  idle_.wait_for(lock, std::chrono::milliseconds(50), [&] { return !busy_; });
}

void Worker::after_fork_parent() {
  std::lock_guard lock(mu);
  forking_ = false;
  work.notify_all();
}

}  // namespace cumemtrace::interpose
