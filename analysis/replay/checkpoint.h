// The checkpoint index of a trace (`cumemtrace index`, `TRACE.idx`): what `live --at`
// needs to answer one moment deep in a long trace without reading and replaying
// everything before it (one moment in a 100 M-event trace in under a second:
// docs/performance.md, "The checkpoint index").
//
// Every `every` events or so, at the end of a sealed chunk (reader_chunks.h: reading can
// start again there), the index keeps a checkpoint: the byte offset, how many events lie
// before it, the last one's time, and the replay's live state there (the live set, the
// handles, mappings, reservations and graph nodes, the per-device counters, and the
// fragmentation index's ranges; not the peaks: `live` does not read them). Once, it keeps
// what `live` reads of the rest of the trace: the Process, Device, Module, ApiName,
// StackNode and Symbol records of the whole file, and the moments `end` and `peak`.
// A moment T starts from the last checkpoint whose events all lie at or before T, reads
// the trace from its offset until the first chunk that ends past T, and replays only
// that: the same events applied in the same order as a whole replay, so the same answer.
//
// Only a trace that read without damage, is sealed (format >= 1.2) and whose events are
// in time order (the tracer writes them so) gets an index. The index names the trace by
// its size, a hash of the whole file and, per checkpoint, the checksum record ending at
// its offset (that record hashes the chunk before it): an index of another version of the
// file (appended to by `symbolize`, rewritten by a new run, changed anywhere) is refused,
// and `live` reads the whole trace instead.
//
// File layout (little-endian): "CUMTIDX2" ("CUMTIDX1", which hashed only the first 64 KiB,
// is refused as an older format), u64 offset and u64 bytes of the directory,
// u64 XXH3 of the directory; then each checkpoint's state (zstd) and the directory
// (zstd): the trace's identity, moments, records and the checkpoint list, each state
// with its offset, sizes and XXH3. `cumemtrace index` writes it as every file the CLI
// writes (output_file.h: a temporary renamed when whole, 0600).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "read/reader.h"
#include "read/reader_chunks.h"
#include "replay/replay.h"

namespace cumemtrace {

struct Checkpoint {
  uint64_t events_before = 0;  // events replayed into the state
  uint64_t byte_offset = 0;    // a chunk end: reading resumes here (0: from the start)
  uint64_t time_ns = 0;        // the last of those events' time; 0 when there is none
  std::string seal;            // the ChecksumRecord (header included) ending at byte_offset
  uint64_t state_offset = 0;   // in the index file
  uint64_t state_bytes = 0;    // compressed
  uint64_t state_raw_bytes = 0;
  uint64_t state_hash = 0;  // XXH3 of the compressed bytes
};

struct TraceIndex {
  uint64_t trace_bytes = 0;
  uint64_t trace_hash = 0;  // XXH3 of the whole trace file
  uint64_t events = 0;
  uint64_t end_ns = 0;                     // parse_moment("end") of the whole trace
  std::optional<uint64_t> peak_ns;         // parse_moment("peak"), when some memory was live
  Trace meta;                              // the records `live` reads, of the whole trace; no events
  std::vector<Checkpoint> checkpoints;     // by events_before; the first is the start (no events)
  std::shared_ptr<const MappedFile> file;  // the index file, where the states are read from
};

struct IndexStats {
  uint64_t checkpoints = 0;
  uint64_t index_bytes = 0;
  uint64_t events = 0;
};

// Makes the index of the trace in `bytes` (read from `path`) in `index_bytes`: a
// checkpoint at the first chunk end at least `every` events after the last. The trace is
// read chunk by chunk (reader_chunks.h: parse_trace_streaming), so memory holds the live
// state, the records and one chunk's events, not every event. `meta` gets the trace as
// read, without its events (for check_trace). Returns "" or why there can be no index
// (damage, an unsealed trace, events out of time order).
std::string make_index(std::span<const uint8_t> bytes, const std::string& path, uint64_t every, Trace& meta,
                       std::string& index_bytes, IndexStats& stats);

// Reads the index at `index_path` and checks that it is the index of `trace_bytes`.
// Returns "" or why it cannot be used.
std::string load_index(const std::string& index_path, std::span<const uint8_t> trace_bytes, TraceIndex& out);

// The replay's live state at checkpoint `c` of `index`, or nullopt with `error` saying why
// (a damaged index).
std::optional<Replayer> restore_checkpoint(const TraceIndex& index, const Checkpoint& c, std::string& error);

// The last checkpoint whose events all lie at or before `at_ns` (the first one, with no
// events, when there is none later).
const Checkpoint& checkpoint_for(const TraceIndex& index, uint64_t at_ns);

}  // namespace cumemtrace
