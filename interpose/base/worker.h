// A background thread of the tracer's own (the trace's flush thread, the NVML reader
// thread): how it starts, how it stands still around a fork, and how its state outlives
// it. Written once here so that every such thread keeps the same three rules:
//
// - Signals are the program's business: the thread runs with every signal blocked.
// - Around a fork (docs/capture-and-fork.md) the thread starts no round, and the fork
//   waits a little (at most 50 ms) for the round in progress. A round may allocate
//   outside every lock the fork holds, and a child that inherits an allocator locked
//   mid-allocation (GCC 12's AddressSanitizer allocator is not fork-safe) hangs at its
//   first allocation: 1 child in 100 of the NVTX fork test under ASan, 1 in ~80 of the
//   NVML reader's under load, without the pause. Bounded: a thread stuck on a slow disk or a hung
//   NVML must not hold the program's fork up.
// - Its state is never destroyed (the thread may still be running at exit, inside NVML or
//   a write) and is replaced in a forked child, whose copy may be locked by a thread that
//   does not exist there; the parent's copy is left behind, unfreed, in copy-on-write
//   pages the child never touches.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace cumemtrace::interpose {

// The thread and its fork pause. An owner's state derives from it and guards its own
// fields with `mu` too, so that one lock orders a round's start against a fork.
class Worker {
 public:
  std::mutex mu;                 // the pause's flags, and whatever the owner guards with it
  std::condition_variable work;  // notified when there is work, and when a fork is over

  // Starts `loop(*this)` on a thread of its own with every signal blocked; the thread counts
  // as in a round until it first waits. Call with `mu` held, or before other threads see the
  // worker. False when no thread could be made.
  bool start(void (*loop)(Worker&));

  // In the thread's loop, with `mu` held by `lock`: the round is over; waits until `ready()`
  // and no fork is being prepared, then a new round begins.
  template <class Ready>
  void between_rounds(std::unique_lock<std::mutex>& lock, Ready ready) {
    round_over();
    work.wait(lock, [&] { return ready() && !forking_; });
    busy_ = true;
  }
  // The same, waiting for `ready()` at most `most`, then while a fork is being prepared.
  template <class Ready>
  void between_rounds(std::unique_lock<std::mutex>& lock, std::chrono::milliseconds most, Ready ready) {
    round_over();
    work.wait_for(lock, most, ready);
    work.wait(lock, [&] { return !forking_; });
    busy_ = true;
  }

  void prepare_fork();  // no round starts; the one in progress is waited for at most 50 ms
  void after_fork_parent();

 private:
  static void* run(void* self);
  void round_over();

  void (*loop_)(Worker&) = nullptr;
  bool forking_ = false;
  bool busy_ = false;  // a round is in progress
  std::condition_variable idle_;
};

// Where a worker's state lives: made once, never destroyed, forgotten in a forked child
// (whose first use makes a fresh one). T derives from Worker.
template <class T>
class WorkerSlot {
 public:
  T* get() const { return slot_.load(std::memory_order_acquire); }
  void set(T* t) { slot_.store(t, std::memory_order_release); }
  // The one in the slot, or a fresh one if there is none yet (two threads may race: one wins).
  T& get_or_make() {
    T* t = get();
    if (t) return *t;
    auto* fresh = new T;
    if (slot_.compare_exchange_strong(t, fresh, std::memory_order_acq_rel)) return *fresh;
    delete fresh;  // another thread's came first
    return *t;
  }

  void prepare_fork() {
    if (T* t = get()) t->prepare_fork();
  }
  void after_fork_parent() {
    if (T* t = get()) t->after_fork_parent();
  }
  void after_fork_child() { set(nullptr); }

 private:
  std::atomic<T*> slot_{nullptr};
};

}  // namespace cumemtrace::interpose
