#include "track/writer_thread.h"

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include <cumemtrace/trace_format.h>

#include "base/config.h"
#include "base/errno_guard.h"
#include "base/log.h"
#include "base/signal_safe.h"
#include "base/worker.h"
#include "track/trace_sink.h"
#include "track/tracker_state.h"

namespace cumemtrace::interpose {
namespace {

using Clock = std::chrono::steady_clock;

// The thread's state (base/worker.h: its fork pause, its slot). `mu` guards the fields
// below up to `opened`, which `work` signals.
struct WriterThread : Worker {
  bool wake = false, stop = false, done = false;
  bool opened = false;  // the file exists and starts with its preamble (or could not be made)

  // The sink's lock: held by this thread's rounds and by an exec on another thread
  // (flush_before_exec), tried by a fatal signal's handler.
  std::mutex io_mu;
  TraceSink* sink = nullptr;
};

WorkerSlot<WriterThread> g_thread;

// Writes new modules and every pending record; when the trace is broken, the sink drops
// them, so memory stays bounded. Taken and written under one hold of io_mu, so that a
// fatal signal's handler never finds records taken but not yet written.
void flush(WriterThread& t) {
  std::lock_guard io(t.io_mu);
  std::vector<std::string> chunks;
  t.sink->write_modules();
  take_pending(chunks);
  if (!t.sink->write_records(chunks)) stop_tracing();
  give_back_pending(chunks);
}

void announce_failures(WriterThread& t) {
  std::lock_guard io(t.io_mu);
  t.sink->announce_failures(failed_allocations());
}

void open_sink(WriterThread& t) {
  {
    std::lock_guard io(t.io_mu);
    if (!t.sink->open()) stop_tracing();
  }
  std::lock_guard lock(t.mu);
  t.opened = true;
  t.work.notify_all();
}

void writer_thread_loop(Worker& worker) {
  auto& t = static_cast<WriterThread&>(worker);
  open_sink(t);
  const auto snapshot_every = std::chrono::milliseconds(config().snapshot_ms);
  auto next_snapshot = Clock::now() + snapshot_every;
  for (;;) {
    bool stopping;
    {
      std::unique_lock lock(t.mu);
      t.between_rounds(lock, std::chrono::milliseconds(config().flush_ms), [&] { return t.wake || t.stop; });
      t.wake = false;
      stopping = t.stop;
    }
    if (stopping) break;
    t.sink->keep_up();
    if (tracing_enabled()) {
      if (config().snapshot_ms && Clock::now() >= next_snapshot) {
        take_snapshot(format::SnapshotReason::kPeriodic);
        next_snapshot = Clock::now() + snapshot_every;
      } else if (peak_rose_since_snapshot()) {
        // NVML's figure near every peak, so the report can split it at the peak.
        take_snapshot(format::SnapshotReason::kPeak);
      }
    }
    flush(t);
    announce_failures(t);
  }

  take_snapshot(format::SnapshotReason::kExit);
  log_sampling_cost();
  append_end();
  flush(t);
  // A failure just before exit woke us together with the stop: announce it here, or a
  // job that dies of its OOM at once gets no post-mortem.
  announce_failures(t);
  {
    std::lock_guard io(t.io_mu);
    t.sink->close();
  }
  std::lock_guard lock(t.mu);
  t.done = true;
  t.work.notify_all();
}

}  // namespace

void start_writer_thread() {
  auto* t = new WriterThread;
  t->sink = make_trace_sink();
  if (!t->start(writer_thread_loop)) {
    log_warn("cannot start the trace writer thread; tracing is off, the program goes on");
    stop_tracing();
    return;
  }
  g_thread.set(t);
  on_trace_start();
}

void wake_writer_thread() {
  WriterThread* t = g_thread.get();
  if (!t) return;
  std::lock_guard lock(t->mu);
  t->wake = true;
  t->work.notify_one();
}

void finish_trace() {
  WriterThread* t = g_thread.get();
  // Events after this point would land after the exit snapshot: record none.
  stop_tracing();
  if (!t) return;
  std::unique_lock lock(t->mu);
  t->stop = true;
  t->work.notify_one();
  // Bounded: a writer stuck on a hung filesystem must not keep the process from exiting.
  if (!t->work.wait_for(lock, std::chrono::seconds(5), [&] { return t->done; }))
    log_warn("trace writer did not finish within 5 s; the trace may be incomplete");
}

void flush_before_exec(std::string_view target) {
  WriterThread* t = g_thread.get();
  if (!t) return;
  const ErrnoGuard keep_errno;
  {
    // The file is created lazily; an exec right after the first event must not leave an
    // empty file behind. Bounded: never hold an exec up for long.
    std::unique_lock lock(t->mu);
    if (!t->work.wait_for(lock, std::chrono::seconds(1), [&] { return t->opened || t->done; }) || t->done) return;
  }
  if (tracing_enabled()) append_exec_end(target);
  flush(*t);
}

void flush_in_signal_handler() {
  WriterThread* t = g_thread.get();
  if (!t) return;
  for (int ms = 0; ms < 2000; ++ms) {
    if (t->io_mu.try_lock()) {
      // Opening: the writer thread has yet to create the file; wait for it.
      const SinkState state = t->sink->state();
      if (state == SinkState::kOpen)
        visit_pending_in_signal_handler(
            [](std::string_view c, void* sink) { static_cast<TraceSink*>(sink)->write_in_signal_handler(c); }, t->sink);
      if (state != SinkState::kOpening) t->sink->end_in_signal_handler();
      t->io_mu.unlock();
      if (state != SinkState::kOpening) return;
    }
    sleep_one_ms();
  }
}

void writer_thread_prepare_fork() { g_thread.prepare_fork(); }
void writer_thread_after_fork_parent() { g_thread.after_fork_parent(); }

void writer_thread_after_fork_child() {
  if (WriterThread* t = g_thread.get()) t->sink->after_fork_child();
  g_thread.after_fork_child();
}

}  // namespace cumemtrace::interpose
