#include "probe/sampler.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "base/config.h"
#include "base/log.h"
#include "base/worker.h"

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

// The reader thread's state (base/worker.h: its fork pause, its slot); `mu` guards
// everything below and every SamplerItem's flags.
struct Sampler : Worker {
  std::condition_variable answered;
  std::deque<std::shared_ptr<SamplerItem>> queue;
  bool started = false, unstartable = false;
  bool slow = false;  // a reading took longer than its wait, none came in time since: nobody waits
};

// Never destroyed at exit either, as the reader thread may still be inside NVML then.
WorkerSlot<Sampler> g_sampler;

Sampler& sampler() { return g_sampler.get_or_make(); }

std::chrono::milliseconds wait_for_reading() { return std::chrono::milliseconds(config().nvml_wait_ms); }

void reader_thread(Worker& worker) {
  auto& s = static_cast<Sampler&>(worker);
  for (;;) {
    std::shared_ptr<SamplerItem> item;
    {
      std::unique_lock lock(s.mu);
      s.between_rounds(lock, [&] { return !s.queue.empty(); });
      item = std::move(s.queue.front());
      s.queue.pop_front();
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
}

// With s.mu held.
bool start(Sampler& s) {
  if (s.started || s.unstartable) return s.started;
  if (!s.start(reader_thread)) {
    log_warn("cannot start the NVML reader thread; snapshots carry no NVML figures");
    s.unstartable = true;
    return false;
  }
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

// A hung NVML makes the fork wait its 50 ms (the child then finds the loader unusable:
// the reading is a ForeignCall, loader_lock.h).
void sampler_prepare_fork() { g_sampler.prepare_fork(); }
void sampler_after_fork_parent() { g_sampler.after_fork_parent(); }
void sampler_after_fork_child() { g_sampler.after_fork_child(); }

}  // namespace cumemtrace::interpose
