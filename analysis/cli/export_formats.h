// The formats of `cumemtrace export` (docs/cli.md), one row each: its name, what --format's
// help calls it, how it reads the traces and its writer. export_command.cpp checks the
// options and reads the traces by the row; a new format is a row here and its writer's files
// under render/export/ (and, what it replays or sums, its model under reports/).
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "read/event_source.h"
#include "read/reader.h"

namespace cumemtrace {

struct ExportOptions {
  std::string format;              // a row's name
  std::vector<std::string> paths;  // traces
  std::string output;              // file (a directory's format: directory); empty or "-": stdout
  std::string at;                  // a moment's format: a moment (live_time.h) ...
  bool at_given = false;           // ... if --at was given (an empty one is an error); else peak
  std::string from, to;            // a moment's format: a window (live_time.h peak_moment_between) ...
  bool from_given = false;         // ... its start, else the trace's ("0 s")
  bool to_given = false;           // ... its end, else "end"
  bool window = false;             // either given
  bool zstd = false;               // a directory's format: NAME.jsonl.zst
};

// How a format reads its traces.
enum class ExportReads {
  kWhole,      // exactly one trace, held whole
  kEach,       // each trace in turn, a large one in passes (event_source.h)
  kAtMoment,   // each trace at one moment (--at, --from and --to; by default its peak)
  kDirectory,  // each trace in turn, into a directory of files (-o DIR; --zstd)
};

// A trace checked before anything was written: its path, its file's stamp then, and (a
// moment's format) the moment, CLOCK_MONOTONIC.
struct ExportInput {
  std::string path;
  FileStamp checked;
  uint64_t at_ns = 0;
};

// What a writer is given: the traces as its row reads them (kWhole: `whole`, its events
// read in passes when the file is large).
struct ExportRun {
  const ExportOptions& opt;
  std::vector<ExportInput> inputs;
  TraceFile* whole = nullptr;
};

struct ExportFormat {
  const char* name;
  const char* help;  // "memviz (PyTorch pickle)": the part in parentheses
  ExportReads reads;
  // Writes the export to `out` (kDirectory: to opt.output, `out` unused). Returns 0 with
  // `said` set (what was written, for the closing line), or the exit status, having said
  // why on stderr.
  int (*write)(const ExportRun& run, std::ostream& out, std::string& said);
};

// Every format, in the order --format's help lists them.
std::span<const ExportFormat> export_formats();

// False, having said why, when `file` is not the file checked as `then`.
bool as_checked(const FileStamp& then, const TraceFile& file);

}  // namespace cumemtrace
