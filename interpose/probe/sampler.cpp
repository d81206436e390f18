#include "probe/sampler.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "base/config.h"
#include "base/log.h"

namespace cumemtrace::interpose {

struct SamplerItem {
  std::shared_ptr<NvmlReading> reading;
  LateReading late = nullptr;
  bool queued = false;     // handed to the reader thread
  bool done = false;       // read: `reading->figures` are final
  bool abandoned = false;  // its requester stopped waiting: `late` gets it
};

namespace {

using Clock = std::chrono::steady_clock;

// Readings waiting behind the one in progress. Beyond this the reader thread is stuck
// (NVML hangs): new readings are not queued, so memory stays bounded.
constexpr size_t kMaxQueued = 2;
constexpr auto kLoadWait = std::chrono::seconds(1);

struct Sampler {
  std::mutex mu;  // everything below, and every SamplerItem's flags
  std::condition_variable work, answered;
  std::deque<std::shared_ptr<SamplerItem>> queue;
  bool started = false, unstartable = false;
  bool slow = false;  // a reading took longer than its wait, none came in time since: nobody waits
  // Around a fork (sampler_prepare_fork): the reader starts no new reading, and the fork
  // waits a little for the one in progress. A reader thread inside malloc at the fork
  // leaves a malloc that is not fork-safe (GCC 12's AddressSanitizer allocator) locked in
  // the child, whose first allocation then hangs: 1 child in ~80 under load, before.
  bool forking = false;
  bool busy = false;  // a reading (with its late callback) is in progress
  std::condition_variable idle;
};

// Replaced (never destroyed) in a forked child, whose copy may be locked by a thread
// that does not exist there; never destroyed at exit either, as the reader thread may
// still be inside NVML then.
std::atomic<Sampler*> g_sampler{nullptr};

Sampler& sampler() {
  Sampler* s = g_sampler.load(std::memory_order_acquire);
  if (s) return *s;
  auto* fresh = new Sampler;
  if (g_sampler.compare_exchange_strong(s, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;  // another thread's came first
  return *s;
}

std::chrono::milliseconds wait_for_reading() { return std::chrono::milliseconds(config().nvml_wait_ms); }

void* reader_thread(void* arg) {
  auto& s = *static_cast<Sampler*>(arg);
  // Signals are the program's business, never this thread's.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  for (;;) {
    std::shared_ptr<SamplerItem> item;
    {
      std::unique_lock lock(s.mu);
      s.busy = false;
      s.idle.notify_all();
      s.work.wait(lock, [&] { return !s.queue.empty() && !s.forking; });
      item = std::move(s.queue.front());
      s.queue.pop_front();
      s.busy = true;
    }
    const bool loading = !nvml_looked_for();
    const auto t0 = Clock::now();
    NvmlReading& r = *item->reading;  // the requester reads it only once `done` is set
    for (const auto& [device, uuid] : r.uuids) r.figures[device] = nvml_query(uuid);
    const auto took = Clock::now() - t0;
    bool late;
    {
      std::lock_guard lock(s.mu);
      item->done = true;
      late = item->abandoned;
      s.slow = took > (loading ? std::max<Clock::duration>(kLoadWait, wait_for_reading()) : wait_for_reading());
      s.answered.notify_all();
    }
    if (late && item->late) item->late(r);
  }
  return nullptr;
}

// With s.mu held.
bool start(Sampler& s) {
  if (s.started || s.unstartable) return s.started;
  pthread_t thread;
  if (pthread_create(&thread, nullptr, reader_thread, &s) != 0) {
    log_warn("cannot start the NVML reader thread; snapshots carry no NVML figures");
    s.unstartable = true;
    return false;
  }
  pthread_detach(thread);
  s.started = true;
  return true;
}

}  // namespace

NvmlTicket::NvmlTicket(std::shared_ptr<NvmlReading> reading, LateReading late)
    : item_(std::make_shared<SamplerItem>()) {
  item_->reading = std::move(reading);
  item_->late = late;
  Sampler& s = sampler();
  std::lock_guard lock(s.mu);
  if (!start(s) || s.queue.size() >= kMaxQueued) return;
  item_->queued = true;
  s.queue.push_back(item_);
  s.work.notify_one();
}

bool NvmlTicket::wait() {
  Sampler& s = sampler();
  std::unique_lock lock(s.mu);
  if (!item_->queued) return false;
  if (!item_->done && !s.slow) {
    const auto wait = nvml_looked_for() ? wait_for_reading() : std::max<Clock::duration>(kLoadWait, wait_for_reading());
    s.answered.wait_until(lock, Clock::now() + wait, [&] { return item_->done; });
  }
  if (item_->done) return true;
  item_->abandoned = true;
  // The reading in progress is late already (it may never end): nobody waits from now
  // until one comes in time.
  s.slow = true;
  return false;
}

NvmlFigures nvml_query_in_time(const std::string& uuid) {
  auto reading = std::make_shared<NvmlReading>();
  reading->uuids[0] = uuid;
  NvmlTicket ticket(reading, nullptr);
  return ticket.wait() ? reading->figures[0] : NvmlFigures{};
}

void sampler_prepare_fork() {
  Sampler* s = g_sampler.load(std::memory_order_acquire);
  if (!s) return;
  std::unique_lock lock(s->mu);
  s->forking = true;
  // Bounded: a hung NVML must not hold the program's fork up (the child then finds the
  // loader unusable: the reading is a ForeignCall, loader_lock.h).
  s->idle.wait_for(lock, std::chrono::milliseconds(50), [&] { return !s->busy; });
}

void sampler_after_fork_parent() {
  Sampler* s = g_sampler.load(std::memory_order_acquire);
  if (!s) return;
  std::lock_guard lock(s->mu);
  s->forking = false;
  s->work.notify_all();
}

void sampler_after_fork_child() { g_sampler.store(nullptr, std::memory_order_release); }

}  // namespace cumemtrace::interpose
