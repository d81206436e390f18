// `cumemtrace export --format jsonl -o DIR`: the traces as tables, one JSON object per
// line, for DuckDB (`read_json('DIR/events.jsonl')`), pandas (`read_json(lines=True)`)
// and jq. docs/tables.md describes every column; its units are bytes and
// CLOCK_MONOTONIC ns. With `zstd`, each file is one zstd frame, NAME.jsonl.zst (DuckDB
// reads it as is; pandas with compression="zstd").
//
// Tables (every row has `process`, the trace's index in the command line, to join on):
//   processes.jsonl  one row per trace      devices.jsonl  one row per Device record
//   events.jsonl     one row per event      snapshots.jsonl  one row per snapshot and device
//   marks.jsonl      one row per mark       frames.jsonl   one row per frame of every stack
//                                                           that events name
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "read/reader.h"
#include "read/event_source.h"

namespace cumemtrace {

struct JsonlCounts {
  uint64_t rows = 0;  // all tables
  uint64_t files = 0;
};

// The tables of `dir` (which must exist), written one trace at a time: a job of many
// traces, or a trace read in passes (event_source.h), is never held whole. Throws
// std::runtime_error when a file cannot be created or written. `inputs`: the traces'
// paths, which no table is ever written over.
class JsonlTables {
 public:
  JsonlTables(const std::string& dir, const std::vector<std::string>& inputs, bool zstd);
  ~JsonlTables();
  JsonlTables(const JsonlTables&) = delete;
  JsonlTables& operator=(const JsonlTables&) = delete;
  // The next trace's rows (its `process` is the number of traces added before it), its
  // events read from `events` in one scan.
  void add(const Trace& t, const EventSource& events);
  JsonlCounts close();

 private:
  struct Tables;
  std::unique_ptr<Tables> tables_;
  size_t added_ = 0;
};

// All of `traces`, each holding its events, as tables in `dir`.
JsonlCounts write_jsonl(const std::string& dir, const std::vector<const Trace*>& traces, bool zstd);

}  // namespace cumemtrace
