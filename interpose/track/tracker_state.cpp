#include "track/tracker_state.h"

#include <atomic>
#include <functional>
#include <mutex>

#include "base/config.h"
#include "base/signal_safe.h"
#include "probe/sampler.h"
#include "track/writer_thread.h"

namespace cumemtrace::interpose {
namespace {

std::atomic<State*> g_state{nullptr};
std::atomic<bool> g_stopped{false};
std::atomic<bool> g_peak_sites_asked{false};  // reset_peak() was called, maybe before the state was made
std::mutex g_create_mu;                       // trivially destructible in libstdc++: safe at exit
// Records made before the trace started, and those not kept for the bound (both under
// g_create_mu; never freed: used until exit).
std::string* g_before_start = nullptr;
uint64_t g_before_start_dropped = 0;

}  // namespace

int append_before_start(const std::function<void(std::string&)>& put) {
  std::lock_guard lock(g_create_mu);
  if (g_state.load(std::memory_order_relaxed)) return 0;
  if (!g_before_start) g_before_start = new std::string;
  const size_t had = g_before_start->size();
  put(*g_before_start);
  if (g_before_start->size() > kBeforeStartBytes) {
    g_before_start->resize(had);
    ++g_before_start_dropped;
    return -1;
  }
  return 1;
}

State& state() {
  if (State* s = g_state.load(std::memory_order_acquire)) return *s;
  std::lock_guard lock(g_create_mu);
  if (!g_state.load(std::memory_order_relaxed)) {
    State* made = new State;  // lives until exit (or fork)
    made->keep_peak_sites = g_peak_sites_asked.load();
    if (g_before_start) {  // first in the trace: they came before its first event
      made->pending.append(*g_before_start);
      *g_before_start = std::string();
    }
    made->records_dropped = g_before_start_dropped;
    g_state.store(made, std::memory_order_release);
    start_writer_thread();
  }
  return *g_state.load(std::memory_order_relaxed);
}

State* started_state() { return g_state.load(std::memory_order_acquire); }

void ask_for_peak_sites() { g_peak_sites_asked.store(true); }

bool tracing_enabled() { return !config().disabled && !g_stopped.load(std::memory_order_relaxed); }

void stop_tracing() { g_stopped.store(true, std::memory_order_relaxed); }

void take_pending(std::vector<std::string>& chunks) {
  State& s = state();
  std::lock_guard lock(s.mu);
  if (!s.ended) put_bounded_counts(s);
  s.pending.take(chunks);
}

void give_back_pending(std::vector<std::string>& chunks) {
  State& s = state();
  std::lock_guard lock(s.mu);
  s.pending.give_back(chunks);
}

bool visit_pending_in_signal_handler(void (*write)(std::string_view, void*), void* arg) {
  State* s = g_state.load(std::memory_order_acquire);
  if (!s || !try_lock_for_a_second(s->mu)) return false;
  s->pending.for_each_chunk([&](std::string_view c) { write(c, arg); });
  s->mu.unlock();
  return true;
}

// g_create_mu too: a thread starting the trace (state()) while another forks left the
// child waiting on it forever (2 hangs in ~20 forks of a threaded Python program). Always g_create_mu before s->mu, as
// state() then track() take them.
void tracker_prepare_fork() {
  g_create_mu.lock();
  if (State* s = g_state.load(std::memory_order_acquire)) s->mu.lock();
}

void tracker_after_fork_parent() {
  if (State* s = g_state.load(std::memory_order_acquire)) s->mu.unlock();
  g_create_mu.unlock();
}

void tracker_after_fork_child() {
  // The child's CUDA state is not the parent's (CUDA does not survive fork): start
  // afresh, with a trace file of its own only if it touches CUDA. The parent's state
  // is left behind, unfreed, in copy-on-write pages the child never touches.
  if (State* s = g_state.load(std::memory_order_acquire)) s->mu.unlock();
  // The parent's records from before its start are not the child's.
  if (g_before_start) *g_before_start = std::string();
  g_before_start_dropped = 0;
  g_create_mu.unlock();
  g_state.store(nullptr, std::memory_order_release);
  events_after_fork_child();
  blocks_after_fork_child();
  snapshots_after_fork_child();
  bounded_after_fork_child();
  sampler_after_fork_child();
}

}  // namespace cumemtrace::interpose
