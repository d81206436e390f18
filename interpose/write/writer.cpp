#include "write/writer.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <mutex>
#include <vector>

#include <cumemtrace/checksum.h>
#include <zstd.h>

#include "base/config.h"
#include "base/errno_guard.h"
#include "write/fatal_signal.h"
#include "base/log.h"
#include "write/modules.h"
#include "api/nvtx.h"
#include "base/signal_safe.h"
#include "write/trace_file.h"
#include "base/trace_start.h"
#include "base/worker.h"
#include "track/tracker.h"

namespace cumemtrace::interpose {
namespace {

using Clock = std::chrono::steady_clock;

// The writer thread's state (base/worker.h: its fork pause, its slot). `mu` guards the
// fields below up to `opened`, which `work` signals.
struct Writer : Worker {
  bool wake = false, stop = false, done = false;
  bool opened = false;  // the file exists and starts with its preamble

  // Writing, by this thread's loop or by an exec on another thread (flush_before_exec).
  std::mutex io_mu;
  int fd = -1;
  std::string path;  // the trace file's name, once created
  uint64_t failures_announced = 0;
  bool broken = false;
  ModuleScanner modules;
  std::string buf;
  ChunkHasher chunk;          // what was written since the last seal (trace format 1.2)
  ZSTD_CCtx* zstd = nullptr;  // made on first use; never freed (a forked child may hold it)
  std::string compressed, joined;
};

WorkerSlot<Writer> g_writer;

// With io_mu held. `sealed`: the bytes belong to the chunk the next seal covers.
void write_out(Writer& w, std::string& bytes, bool sealed = true) {
  if (sealed && !w.broken) w.chunk.update(bytes.data(), bytes.size());
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

// With io_mu held. Ends each flush with a ChecksumRecord over what it wrote, so every
// flush leaves a complete, verifiable chunk: a reader finds damage and the next good
// chunk, and a SIGKILL loses at most the flush in progress.
void seal_chunk(Writer& w) {
  if (w.broken || w.chunk.pending() == 0) return;
  std::string seal = w.chunk.seal();
  write_out(w, seal, false);
}

// With io_mu held. Writes `n` bytes of whole records as one CompressedRecord when that
// saves bytes (trace format 1.7): zstd level 1, here in the writer thread, costs the hooks
// nothing. A failure to compress writes the records as they are.
void write_compressed(Writer& w, const char* records, size_t n) {
  const size_t head = sizeof(format::RecordHeader) + sizeof(format::CompressedRecord);
  if (!w.zstd) w.zstd = ZSTD_createCCtx();
  w.compressed.resize(head + ZSTD_compressBound(n));
  const size_t z =
      w.zstd ? ZSTD_compressCCtx(w.zstd, w.compressed.data() + head, w.compressed.size() - head, records, n, 1) : 0;
  if (!w.zstd || ZSTD_isError(z) || head + z >= n) {
    w.compressed.assign(records, n);
  } else {
    const format::RecordHeader h{uint16_t(format::RecordType::kCompressed), 0,
                                 uint32_t(sizeof(format::CompressedRecord) + z)};
    const format::CompressedRecord c{n, format::kCodecZstd, 0};
    std::memcpy(w.compressed.data(), &h, sizeof h);
    std::memcpy(w.compressed.data() + sizeof h, &c, sizeof c);
    w.compressed.resize(head + z);
  }
  write_out(w, w.compressed);
}

// With io_mu held. The pending chunks split records anywhere (pending_buffer.h), so they
// are joined, then cut at record boundaries into pieces of about kPiece bytes, each
// compressed on its own.
void write_records(Writer& w, std::vector<std::string>& chunks) {
  constexpr size_t kPiece = 1 << 20, kWorthIt = 256;
  if (!config().compress || w.broken) {
    for (auto& c : chunks) write_out(w, c);
    return;
  }
  w.joined.clear();
  for (auto& c : chunks) w.joined += c, c.clear();
  const char* p = w.joined.data();
  const size_t size = w.joined.size();
  size_t from = 0, at = 0;
  while (at < size) {
    format::RecordHeader h;
    if (size - at < sizeof h) break;  // cannot happen: the tracker appends whole records
    std::memcpy(&h, p + at, sizeof h);
    const size_t next = at + sizeof h + h.payload_bytes;
    if (next > size) break;
    if (at > from && next - from > kPiece) {
      write_compressed(w, p + from, at - from);
      from = at;
    }
    at = next;
  }
  if (size - from >= kWorthIt && size - from <= format::kMaxCompressedRawBytes) {
    write_compressed(w, p + from, size - from);
  } else if (size > from) {
    std::string rest(p + from, size - from);
    write_out(w, rest);
  }
  w.joined.clear();
}

// Writes new modules and every pending record; when the trace is broken, drops them
// instead, so memory stays bounded.
void flush(Writer& w) {
  std::lock_guard io(w.io_mu);
  std::vector<std::string> chunks;
  if (!w.broken) {
    w.modules.scan_if_changed(w.buf);
    write_out(w, w.buf);
  }
  take_pending(chunks);
  write_records(w, chunks);
  seal_chunk(w);
  give_back_pending(chunks);
}

// After a flush that wrote new failed allocations: tell `cumemtrace run`, which writes
// the post-mortem beside the trace while the job is still running (or hanging).
void announce_failures(Writer& w) {
  const uint64_t failures = failed_allocations();
  if (failures == w.failures_announced || w.broken || w.path.empty()) return;
  w.failures_announced = failures;
  announce_in_manifest(w.path, format::kManifestOomPrefix);
}

void open_trace(Writer& w) {
  std::string path = expand_output_pattern(config().output_pattern);
  {
    std::lock_guard io(w.io_mu);
    // The preamble goes into the file sealed as its first chunk, in the same step that
    // creates it: a trace is never 0 bytes, nor an unsealed header.
    // 1.10: every seal numbers its chunk and names this trace (a fresh id per file, a
    // forked child's included), so a reader finds chunks reordered or spliced in.
    const uint64_t trace_id = new_trace_id();
    std::string preamble = trace_preamble(trace_start(), trace_id);
    w.chunk.number_chunks(trace_id, 0);
    w.chunk.update(preamble.data(), preamble.size());
    preamble += w.chunk.seal();
    w.fd = create_trace_file(path, preamble);
    if (w.fd < 0) {
      log_warn("cannot create trace file {} ({}); tracing is off, the program goes on", path, std::strerror(errno));
      stop_tracing();
      w.broken = true;
    } else {
      log_info("tracing to {}", path);
      announce_in_manifest(path);
      w.path = path;
    }
  }
  std::lock_guard lock(w.mu);
  w.opened = true;
  w.work.notify_all();
}

void writer_thread(Worker& worker) {
  auto& w = static_cast<Writer&>(worker);
  open_trace(w);
  const auto snapshot_every = std::chrono::milliseconds(config().snapshot_ms);
  auto next_snapshot = Clock::now() + snapshot_every;
  for (;;) {
    bool stopping;
    {
      std::unique_lock lock(w.mu);
      w.between_rounds(lock, std::chrono::milliseconds(config().flush_ms), [&] { return w.wake || w.stop; });
      w.wake = false;
      stopping = w.stop;
    }
    if (stopping) break;
    arm_fatal_signals();  // again: the program may have put SIG_DFL back
    if (tracing_enabled()) {
      if (config().snapshot_ms && Clock::now() >= next_snapshot) {
        take_snapshot(format::SnapshotReason::kPeriodic);
        next_snapshot = Clock::now() + snapshot_every;
      } else if (peak_rose_since_snapshot()) {
        // NVML's figure near every peak, so the report can split it at the peak.
        take_snapshot(format::SnapshotReason::kPeak);
      }
    }
    flush(w);
    announce_failures(w);
  }

  take_snapshot(format::SnapshotReason::kExit);
  log_sampling_cost();
  append_end();
  flush(w);
  // A failure just before exit woke us together with the stop: announce it here, or a
  // job that dies of its OOM at once gets no post-mortem (attack, run L's session).
  announce_failures(w);
  {
    std::lock_guard io(w.io_mu);
    if (w.fd >= 0) close(w.fd);
    w.fd = -1;
    w.broken = true;  // nothing more goes to this file, even from a late exec
  }
  std::lock_guard lock(w.mu);
  w.done = true;
  w.work.notify_all();
}

}  // namespace

void start_writer() {
  auto* w = new Writer;
  if (!w->start(writer_thread)) {
    log_warn("cannot start the trace writer thread; tracing is off, the program goes on");
    stop_tracing();
    return;
  }
  g_writer.set(w);
  arm_fatal_signals();
  warn_if_nvtx_elsewhere();
}

void wake_writer() {
  Writer* w = g_writer.get();
  if (!w) return;
  std::lock_guard lock(w->mu);
  w->wake = true;
  w->work.notify_one();
}

void finish_writer() {
  Writer* w = g_writer.get();
  // Events after this point would land after the exit snapshot: record none.
  stop_tracing();
  if (!w) return;
  std::unique_lock lock(w->mu);
  w->stop = true;
  w->work.notify_one();
  // Bounded: a writer stuck on a hung filesystem must not keep the process from exiting.
  if (!w->work.wait_for(lock, std::chrono::seconds(5), [&] { return w->done; }))
    log_warn("trace writer did not finish within 5 s; the trace may be incomplete");
}

void flush_before_exec(std::string_view target) {
  Writer* w = g_writer.get();
  if (!w) return;
  const ErrnoGuard keep_errno;
  {
    // The writer creates the file lazily; an exec right after the first event must not
    // leave an empty file behind. Bounded: never hold an exec up for long.
    std::unique_lock lock(w->mu);
    if (!w->work.wait_for(lock, std::chrono::seconds(1), [&] { return w->opened || w->done; }) || w->done) return;
  }
  if (tracing_enabled()) append_exec_end(target);
  flush(*w);
}

void writer_prepare_fork() { g_writer.prepare_fork(); }
void writer_after_fork_parent() { g_writer.after_fork_parent(); }

void writer_after_fork_child() {
  if (Writer* w = g_writer.get(); w && w->fd >= 0) close(w->fd);
  g_writer.after_fork_child();
}

void write_pending_in_signal_handler() {
  Writer* w = g_writer.get();
  if (!w) return;
  for (int ms = 0; ms < 2000; ++ms) {
    if (w->io_mu.try_lock()) {
      // No fd and not broken: the writer thread has yet to create the file; wait for it.
      const bool created = w->fd >= 0 || w->broken;
      if (!w->broken && created) {
        // Hashed into the open chunk as written, then sealed, so the reader keeps them.
        visit_pending_in_signal_handler(
            [](std::string_view c, int fd) {
              g_writer.get()->chunk.update(c.data(), c.size());
              write_all_signal_safe(fd, c);
            },
            w->fd);
        if (w->chunk.pending()) {
          char seal[ChunkHasher::kMaxSealBytes];
          const size_t n = w->chunk.seal_into(seal);
          write_all_signal_safe(w->fd, std::string_view(seal, n));
        }
      }
      if (created) w->broken = true;
      w->io_mu.unlock();
      if (created) return;
    }
    sleep_one_ms();
  }
}

}  // namespace cumemtrace::interpose
