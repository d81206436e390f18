// Reading a sealed trace (format >= 1.2) by its chunks: where each chunk ends, and reading
// from one chunk's end onwards. The checkpoint index (checkpoint.h) uses both: a chunk
// end is a place where reading can start again, since a chunk is whole and sealed.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "read/reader.h"

namespace cumemtrace {

// The byte just past a chunk's ChecksumRecord, and how many events the chunks up to and
// including it hold.
struct ChunkEnd {
  uint64_t byte_offset = 0;
  uint64_t events_before = 0;
};

// parse_trace, noting the end of every sealed chunk in `ends` (none for older formats).
Trace parse_trace_chunks(std::span<const uint8_t> bytes, std::string path, std::vector<ChunkEnd>& ends);

// A sealed trace read chunk by chunk, so that memory holds one chunk's events rather than
// the whole trace's (`cumemtrace index` on 10^8 events): after each sealed chunk,
// `on_chunk` gets the Trace read so far, whose `events` are that chunk's only, and where
// the chunk ends (events counted from the start of the trace); the events are dropped
// after the call. The Trace returned holds every other record, and no events unless the
// trace has no sealed chunks (format < 1.2: nothing is handed over, all stay in it).
using ChunkCallback = std::function<void(const Trace& read_so_far, const ChunkEnd& end)>;
Trace parse_trace_streaming(std::span<const uint8_t> bytes, std::string path, const ChunkCallback& on_chunk);

// A trace of any format read with its events handed to `on_event` one by one, in file
// order, as they are read, and kept nowhere: the Trace returned holds every other record.
// The events are those parse_trace would keep (a sealed chunk's, or an older format's
// readable records). `quiet`: no "reading" progress (progress.h), for a pass whose
// callback says its own. `mapped`: the file `bytes` are mapped from, whose
// pages behind each sealed chunk read are given back (MappedFile::release_before), so
// that reading a trace of any length holds a bounded part of it. `on_block`, when given,
// gets the block records (1.13) likewise, in file order, and the Trace keeps none of them;
// an empty `on_event` keeps the events in the Trace, as parse_trace does.
class MappedFile;
using EventCallback = std::function<void(const Event& e)>;
using BlockCallback = std::function<void(const BlockEvent& b)>;
Trace parse_trace_events(std::span<const uint8_t> bytes, std::string path, const EventCallback& on_event,
                         bool quiet = false, const MappedFile* mapped = nullptr,
                         const BlockCallback* on_block = nullptr);

// The events of a sealed trace from `offset` (a ChunkEnd::byte_offset of the same bytes)
// on, and whatever other records follow it, until the end of the file or the first chunk
// after which the last event read is later than `stop_after_ns`. The header is read from
// the start of `bytes` as usual; damage after `offset` is reported as parse_trace does.
Trace parse_trace_from(std::span<const uint8_t> bytes, std::string path, uint64_t offset,
                       uint64_t stop_after_ns = std::numeric_limits<uint64_t>::max());

// What tells one file from another under the same path: a command that checks its traces
// first and reads them later compares these (event_source.h, not_as_checked).
struct FileStamp {
  uint64_t device = 0, inode = 0, size = 0, mtime_ns = 0;  // 0s: nothing mapped
};

// A trace file mapped read-only (read_trace's way of reading). `bytes()` is empty and
// `error()` says why when the file could not be mapped (an empty file maps to nothing).
class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::span<const uint8_t> bytes() const { return {static_cast<const uint8_t*>(data_), size_}; }
  const std::string& error() const { return error_; }
  uint64_t mtime_ns() const { return mtime_ns_; }
  // Drops the pages before `offset` from this process (madvise MADV_DONTNEED): a reader
  // done with them stops holding them in its RSS; a later read faults them in again from
  // the page cache. Does nothing until at least 64 MiB more can go; an offset before the
  // last one given starts over (the next pass of a reader).
  void release_before(uint64_t offset) const;
  // How far from the start the pages were last given back (0: none yet, or a read from
  // the start again).
  uint64_t released() const { return released_; }
  // Whether the file was cut short under the mapping (its pages past the new end read as
  // zeros: cut_guard.h). Bytes appended after the mapping (a trace still being written)
  // and a file replaced under its name (a rename) leave the mapping whole: not cut.
  bool cut() const;
  // Whether bytes of the file were written over in place since it was mapped: the same
  // file, of the same size, modified later. (Appending changes the size: a trace still
  // being written is not this.)
  bool written_in_place() const;
  FileStamp stamp() const { return {device_, inode_, size_, mtime_ns_}; }

 private:
  std::string path_;
  void* data_ = nullptr;
  size_t size_ = 0;
  int guard_ = -1;  // cut_guard.h's slot
  uint64_t device_ = 0, inode_ = 0;
  mutable uint64_t released_ = 0;
  uint64_t mtime_ns_ = 0;
  std::string error_;
};

}  // namespace cumemtrace
