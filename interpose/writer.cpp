#include "writer.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <mutex>
#include <vector>

#include "config.h"
#include "log.h"
#include "modules.h"
#include "trace_file.h"
#include "trace_start.h"
#include "tracker.h"

namespace cumemtrace::interpose {
namespace {

using Clock = std::chrono::steady_clock;

struct Writer {
  std::mutex mu;
  std::condition_variable cv;
  bool wake = false, stop = false, done = false;
  int fd = -1;
  bool broken = false;
};

// Replaced (never destroyed) in a forked child, whose copy may be locked by a thread
// that does not exist there.
Writer* g_writer = nullptr;

void write_out(Writer& w, std::string& bytes) {
  size_t done = 0;
  while (!w.broken && done < bytes.size()) {
    const ssize_t n = write(w.fd, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      // A full disk or a vanished file must not hurt the job: stop tracing, say so once.
      log_warn("writing the trace failed ({}); tracing stops, the program goes on", std::strerror(errno));
      w.broken = true;
      stop_tracing();
    }
  }
  bytes.clear();
}

void flush(Writer& w, ModuleScanner& modules, std::string& buf) {
  modules.scan_if_changed(buf);
  write_out(w, buf);
  std::vector<std::string> chunks;
  take_pending(chunks);
  for (auto& c : chunks) write_out(w, c);
  give_back_pending(chunks);
}

void* run(void* arg) {
  auto& w = *static_cast<Writer*>(arg);
  // Signals are the program's business, never this thread's.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);

  std::string path = expand_output_pattern(config().output_pattern);
  w.fd = create_trace_file(path);
  std::string buf;
  if (w.fd < 0) {
    log_warn("cannot create trace file {} ({}); tracing is off, the program goes on", path, std::strerror(errno));
    stop_tracing();
    w.broken = true;
  } else {
    log_info("tracing to {}", path);
    announce_in_manifest(path);
    buf = trace_preamble(trace_start());
    write_out(w, buf);
  }

  ModuleScanner modules;
  const auto snapshot_every = std::chrono::milliseconds(config().snapshot_ms);
  auto next_snapshot = Clock::now() + snapshot_every;
  for (;;) {
    bool stopping;
    {
      std::unique_lock lock(w.mu);
      w.cv.wait_for(lock, std::chrono::milliseconds(config().flush_ms), [&] { return w.wake || w.stop; });
      w.wake = false;
      stopping = w.stop;
    }
    if (stopping) break;
    if (w.broken) {
      std::vector<std::string> dropped;  // keep memory bounded; nothing is written any more
      take_pending(dropped);
      give_back_pending(dropped);
      continue;
    }
    if (config().snapshot_ms && Clock::now() >= next_snapshot) {
      append_snapshot(format::SnapshotReason::kPeriodic, sample_devices());
      next_snapshot = Clock::now() + snapshot_every;
    } else if (peak_rose_since_snapshot()) {
      // NVML's figure near every peak, so the report can split it at the peak.
      append_snapshot(format::SnapshotReason::kPeak, sample_devices());
    }
    flush(w, modules, buf);
  }

  if (!w.broken) {
    append_snapshot(format::SnapshotReason::kExit, sample_devices());
    append_end();
    flush(w, modules, buf);
  }
  if (w.fd >= 0) close(w.fd);
  std::lock_guard lock(w.mu);
  w.done = true;
  w.cv.notify_all();
  return nullptr;
}

}  // namespace

void start_writer() {
  auto* w = new Writer;
  pthread_t thread;
  if (pthread_create(&thread, nullptr, run, w) != 0) {
    log_warn("cannot start the trace writer thread; tracing is off, the program goes on");
    stop_tracing();
    return;
  }
  pthread_detach(thread);
  g_writer = w;
}

void wake_writer() {
  Writer* w = g_writer;
  if (!w) return;
  std::lock_guard lock(w->mu);
  w->wake = true;
  w->cv.notify_one();
}

void finish_writer() {
  Writer* w = g_writer;
  // Events after this point would land after the exit snapshot: record none.
  stop_tracing();
  if (!w) return;
  std::unique_lock lock(w->mu);
  w->stop = true;
  w->cv.notify_one();
  // Bounded: a writer stuck on a hung filesystem must not keep the process from exiting.
  if (!w->cv.wait_for(lock, std::chrono::seconds(5), [&] { return w->done; }))
    log_warn("trace writer did not finish within 5 s; the trace may be incomplete");
}

void writer_after_fork_child() {
  if (g_writer && g_writer->fd >= 0) close(g_writer->fd);
  g_writer = nullptr;
}

}  // namespace cumemtrace::interpose
