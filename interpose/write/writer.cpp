// The trace file's writer: the sink the tracker owns (track/trace_sink.h). Hooks never
// touch the disk: they append encoded records to the tracker's buffer, and the trace
// thread (track/writer_thread.h) hands them here at least every CUMEMTRACE_FLUSH_MS
// (<= 100 ms), so a process killed with SIGKILL leaves a file readable up to its last
// flush. The writer knows records as bytes and the file; it never calls the tracker.
//
// The file is created lazily, by the writer thread: a process that never touches CUDA
// gets none. It comes into being with its preamble already written (trace_file.h), mode
// 0600, never through a symlink nor over an existing file; a taken name gets ".N".
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <cumemtrace/checksum.h>
#include <cumemtrace/record_encode.h>
#include <zstd.h>

#include "base/config.h"
#include "base/log.h"
#include "base/signal_safe.h"
#include "base/trace_start.h"
#include "track/trace_sink.h"
#include "write/fatal_signal.h"
#include "write/modules.h"
#include "write/trace_file.h"

namespace cumemtrace::interpose {
namespace {

// Called by one thread at a time (trace_sink.h); never destroyed (a forked child may
// find it mid-write).
class TraceWriter final : public TraceSink {
 public:
  bool open() override;
  void keep_up() override { arm_fatal_signals(); }
  void write_modules() override;
  bool write_records(std::vector<std::string>& chunks) override;
  void announce_failures(uint64_t failed) override;
  void close() override;
  SinkState state() const override;
  void write_in_signal_handler(std::string_view chunk) override;
  void end_in_signal_handler() override;
  void after_fork_child() override;

 private:
  void write_out(std::string& bytes, bool sealed = true);
  void seal_chunk();
  void write_compressed(const char* records, size_t n);

  int fd_ = -1;
  std::string path_;  // the trace file's name, once created
  uint64_t failures_announced_ = 0;
  bool broken_ = false;
  ModuleScanner modules_;
  std::string buf_;
  ChunkHasher chunk_;          // what was written since the last seal (trace format 1.2)
  ZSTD_CCtx* zstd_ = nullptr;  // made on first use; never freed (a forked child may hold it)
  std::string compressed_, joined_;
};

// `sealed`: the bytes belong to the chunk the next seal covers.
void TraceWriter::write_out(std::string& bytes, bool sealed) {
  if (sealed && !broken_) chunk_.update(bytes.data(), bytes.size());
  size_t done = 0;
  while (!broken_ && done < bytes.size()) {
    const ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      // A full disk or a vanished file must not hurt the job: stop tracing, say so once.
      log_warn("writing the trace failed ({}); tracing stops, the program goes on", std::strerror(errno));
      broken_ = true;
    }
  }
  bytes.clear();
}

// Ends each flush with a ChecksumRecord over what it wrote, so every flush leaves a
// complete, verifiable chunk: a reader finds damage and the next good chunk, and a
// SIGKILL loses at most the flush in progress.
void TraceWriter::seal_chunk() {
  if (broken_ || chunk_.pending() == 0) return;
  std::string seal = chunk_.seal();
  write_out(seal, false);
}

// Writes `n` bytes of whole records as one CompressedRecord when that saves bytes (trace
// format 1.7): zstd level 1, here on the writer thread, costs the hooks nothing. A failure
// to compress writes the records as they are.
void TraceWriter::write_compressed(const char* records, size_t n) {
  const size_t head = sizeof(format::RecordHeader) + sizeof(format::CompressedRecord);
  if (!zstd_) zstd_ = ZSTD_createCCtx();
  compressed_.resize(head + ZSTD_compressBound(n));
  const size_t z =
      zstd_ ? ZSTD_compressCCtx(zstd_, compressed_.data() + head, compressed_.size() - head, records, n, 1) : 0;
  if (!zstd_ || ZSTD_isError(z) || head + z >= n) {
    compressed_.assign(records, n);
  } else {
    BytesAt at{compressed_.data()};  // in front of the frame, whose size is now known
    put_record_head<format::RecordType::kCompressed>(at, format::CompressedRecord{n, format::kCodecZstd, 0}, z);
    compressed_.resize(head + z);
  }
  write_out(compressed_);
}

void TraceWriter::write_modules() {
  if (broken_) return;
  modules_.scan_if_changed(buf_);
  write_out(buf_);
}

// The chunks split records anywhere (pending_buffer.h), so they are joined, then cut at
// record boundaries into pieces of about kPiece bytes, each compressed on its own.
bool TraceWriter::write_records(std::vector<std::string>& chunks) {
  constexpr size_t kPiece = 1 << 20, kWorthIt = 256;
  if (!config().compress || broken_) {
    for (auto& c : chunks) write_out(c);
    seal_chunk();
    return !broken_;
  }
  joined_.clear();
  for (auto& c : chunks) joined_ += c, c.clear();
  const char* p = joined_.data();
  const size_t size = joined_.size();
  size_t from = 0, at = 0;
  while (at < size) {
    format::RecordHeader h;
    if (size - at < sizeof h) break;  // cannot happen: the tracker appends whole records
    std::memcpy(&h, p + at, sizeof h);
    const size_t next = at + sizeof h + h.payload_bytes;
    if (next > size) break;
    if (at > from && next - from > kPiece) {
      write_compressed(p + from, at - from);
      from = at;
    }
    at = next;
  }
  if (size - from >= kWorthIt && size - from <= format::kMaxCompressedRawBytes) {
    write_compressed(p + from, size - from);
  } else if (size > from) {
    std::string rest(p + from, size - from);
    write_out(rest);
  }
  joined_.clear();
  seal_chunk();
  return !broken_;
}

// Tells `cumemtrace run`, which writes the post-mortem beside the trace while the job is
// still running (or hanging).
void TraceWriter::announce_failures(uint64_t failed) {
  if (failed == failures_announced_ || broken_ || path_.empty()) return;
  failures_announced_ = failed;
  announce_in_manifest(path_, format::kManifestOomPrefix);
}

bool TraceWriter::open() {
  std::string path = expand_output_pattern(config().output_pattern);
  // The preamble goes into the file sealed as its first chunk, in the same step that
  // creates it: a trace is never 0 bytes, nor an unsealed header.
  // 1.10: every seal numbers its chunk and names this trace (a fresh id per file, a
  // forked child's included), so a reader finds chunks reordered or spliced in.
  const uint64_t trace_id = new_trace_id();
  std::string preamble = trace_preamble(trace_start(), trace_id);
  chunk_.number_chunks(trace_id, 0);
  chunk_.update(preamble.data(), preamble.size());
  preamble += chunk_.seal();
  fd_ = create_trace_file(path, preamble);
  if (fd_ < 0) {
    log_warn("cannot create trace file {} ({}); tracing is off, the program goes on", path, std::strerror(errno));
    broken_ = true;
    return false;
  }
  log_info("tracing to {}", path);
  announce_in_manifest(path);
  path_ = path;
  return true;
}

void TraceWriter::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  broken_ = true;  // nothing more goes to this file, even from a late exec
}

SinkState TraceWriter::state() const {
  if (broken_) return SinkState::kBroken;
  return fd_ >= 0 ? SinkState::kOpen : SinkState::kOpening;
}

// Hashed into the open chunk as written, then sealed (end_in_signal_handler), so the
// reader keeps them.
void TraceWriter::write_in_signal_handler(std::string_view chunk) {
  if (broken_) return;
  chunk_.update(chunk.data(), chunk.size());
  write_all_signal_safe(fd_, chunk);
}

void TraceWriter::end_in_signal_handler() {
  if (!broken_ && chunk_.pending()) {
    char seal[ChunkHasher::kMaxSealBytes];
    const size_t n = chunk_.seal_into(seal);
    write_all_signal_safe(fd_, std::string_view(seal, n));
  }
  broken_ = true;
}

void TraceWriter::after_fork_child() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace

TraceSink* make_trace_sink() { return new TraceWriter; }

}  // namespace cumemtrace::interpose
