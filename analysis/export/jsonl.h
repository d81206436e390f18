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
#include <string>
#include <vector>

#include "cumemtrace/reader.h"

namespace cumemtrace {

struct JsonlCounts {
  uint64_t rows = 0;  // all tables
  uint64_t files = 0;
};

// Writes the tables into `dir` (which must exist). Throws std::runtime_error when a file
// cannot be written.
JsonlCounts write_jsonl(const std::string& dir, const std::vector<const Trace*>& traces, bool zstd);

}  // namespace cumemtrace
