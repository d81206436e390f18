// A trace's events, read as many times as a command needs: held in memory (a Trace read
// whole), or read again from the file on each pass, chunk by chunk, so that a sealed trace
// of any length costs the memory of one chunk's events (held whole, `report` on 10^8 events
// took 32 B per event, 3.2 GB: docs/performance.md, "`report` in passes over the file").
//
// `report` reads the events twice (report.h): once to replay and gather, once to copy the
// live sets at moments found by the first pass (peaks, failures, iteration boundaries).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "read/reader.h"
#include "read/reader_chunks.h"

namespace cumemtrace {

class EventSource {
 public:
  // Every event in file order with its index (0 for the first event of the trace).
  using Each = std::function<void(const Event& e, size_t index)>;
  // A block record (trace format 1.13) with its index among the trace's block records.
  using EachBlock = std::function<void(const BlockEvent& b, size_t index)>;
  virtual ~EventSource() = default;
  virtual void scan(const Each& each) const = 0;
  virtual size_t size() const = 0;  // how many events a scan visits
  // The block records in file order: `trace`'s own (Trace::block_events) unless this source
  // reads them from the file at each scan, as it reads the events (a PyTorch job's trace
  // holds one per tensor: held whole, 10 M tensors took 5.9 GB; docs/performance.md).
  virtual void scan_blocks(const Trace& trace, const EachBlock& each) const;
  // The events and the block records as they were written: a block record after the events
  // read before it (BlockEvent::events_before), so that a segment the driver gave is seen
  // before the blocks the allocator cut from it; one scan.
  virtual void scan_in_file_order(const Trace& trace, const Each& each, const EachBlock& each_block) const;
};

// Events a Trace holds (read whole, or an older format's events).
class MemoryEvents final : public EventSource {
 public:
  explicit MemoryEvents(const EventLog& events) : events_(events) {}
  void scan(const Each& each) const override;
  size_t size() const override { return events_.size(); }

 private:
  const EventLog& events_;
};

// A trace's events and block records parsed again from its bytes at each scan
// (parse_trace_events), one at a time: memory holds none of them. `events`, `blocks` and
// `damage` are how many events, block records and damaged ranges the first read found;
// the bytes (of `mapped` when given: its pages are given back as they are read) must
// outlive this. With `threads` 2 a thread of its own decodes while the caller's runs
// `each` (docs/performance.md, "Decode and replay on two threads"): batches of kBatch
// records (the events and block records a scan asked for) in file order, at most kQueued
// waiting, so memory holds a few thousand and `each` sees exactly what one thread would
// give it.
class FileEvents final : public EventSource {
 public:
  static constexpr size_t kBatch = 4096, kQueued = 4;
  FileEvents(std::span<const uint8_t> bytes, std::string path, size_t events, size_t damage,
             const MappedFile* mapped = nullptr, unsigned threads = 2, size_t blocks = 0)
      : bytes_(bytes), path_(std::move(path)), events_(events), blocks_(blocks), damage_(damage), mapped_(mapped),
        threads_(threads) {}
  void scan(const Each& each) const override { run(&each, nullptr); }
  size_t size() const override { return events_; }
  void scan_blocks(const Trace&, const EachBlock& each) const override { run(nullptr, &each); }
  void scan_in_file_order(const Trace&, const Each& each, const EachBlock& each_block) const override {
    run(&each, &each_block);
  }
  // A scan read other events, block records or damage than the first read: the bytes changed under the
  // mapping (written in place), and what the passes saw does not add up to one trace.
  bool changed() const { return changed_; }

 private:
  std::span<const uint8_t> bytes_;
  std::string path_;
  size_t events_;
  size_t blocks_;
  size_t damage_;
  const MappedFile* mapped_;
  unsigned threads_;
  mutable bool changed_ = false;
  // One scan: `each` for every event and `each_block` for every block record, in file
  // order with their indices, on the caller's thread; a null one skips what it would see.
  void run(const Each* each, const EachBlock* each_block) const;
  // One scan's parse on this thread, the indices counted in `events` and `blocks`.
  Trace parse_all(const Each* each, const EachBlock* each_block, size_t& events, size_t& blocks) const;
};

// A trace file opened for a command that reads its events more than once. A file of at
// most `hold_bytes` with at most `hold_blocks` block records is read whole, its events
// and block records held in trace() (one parse: fastest, and 32 B per event is little
// there); any other has every record but those in trace(), and events() reads them from
// the file again at each pass (bounded memory, a parse per pass). A file that cannot be
// mapped gives a Trace whose error says why.
class TraceFile {
 public:
  // 32 MiB: about 3 M events of a compressed trace (~100 MB held), 0.45 M uncompressed.
  static constexpr uint64_t kHoldBytes = 32ull << 20;
  // Block records (1.13) a file read whole may hold (~110 B each: 29 MB); one with more is
  // read in passes whatever its size, its events and block records read again at each.
  static constexpr size_t kHoldBlocks = size_t(1) << 18;
  // `threads`: how many decode and replay a pass over a larger file (FileEvents).
  // `hold_blocks`: the most block records a file read whole holds.
  explicit TraceFile(const std::string& path, uint64_t hold_bytes = kHoldBytes, unsigned threads = 2,
                     size_t hold_blocks = kHoldBlocks);
  // A trace already in memory (`bytes` must outlive this), read the same way.
  TraceFile(std::span<const uint8_t> bytes, const std::string& path, uint64_t hold_bytes = kHoldBytes,
            unsigned threads = 2, size_t hold_blocks = kHoldBlocks);
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
  Trace& trace() { return trace_; }
  const Trace& trace() const { return trace_; }
  const EventSource& events() const { return *events_; }
  bool holds_events() const { return holds_; }  // read whole: trace().events are all of them
  // Whether the file changed while it was read in passes (cut short or written in place):
  // then no figure made from it holds, and the command says so instead of giving them.
  // Ask after the passes.
  bool changed() const;
  // What a command says then, e.g. "trace.trace changed while it was read (...)".
  std::string changed_message() const;
  // The mapped file's identity (FileStamp's 0s for bytes given in memory, or no file).
  FileStamp stamp() const { return file_ ? file_->stamp() : FileStamp{}; }

 private:
  void read(std::span<const uint8_t> bytes, const std::string& path, const MappedFile* mapped, uint64_t hold_bytes,
            unsigned threads, size_t hold_blocks);
  std::optional<MappedFile> file_;
  Trace trace_;
  std::unique_ptr<EventSource> events_;
  const FileEvents* file_events_ = nullptr;
  bool holds_ = true;
};

// Why `now` does not read the file that was checked as `then` (a command that checks
// every trace before it writes anything, then reads them again one at a time): another
// file under the name, cut short, or written over in place. "" when it is the same, or
// has only grown (a trace still being written: appended to).
std::string not_as_checked(const FileStamp& then, const TraceFile& now);

}  // namespace cumemtrace
