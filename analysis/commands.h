// The `cumemtrace` subcommands, one file each (report_command.cpp, live_command.cpp,
// symbolize_command.cpp, export_command.cpp, dump_command.cpp; run_command.cpp for `run`).
// main.cpp parses the command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cumemtrace {

// `paths`: traces, folders of traces or manifests (trace_inputs.h). `rank_tolerance`:
// percent of the median peak past which a rank is imbalanced (job.h), with several traces.
int cmd_report(const std::vector<std::string>& paths, bool json, size_t top, size_t frames, double rank_tolerance);
int cmd_live(const std::string& path, const std::vector<std::string>& at_args, bool json);
// Writes `output` (default TRACE.idx): a checkpoint at least every `every` events (checkpoint.h).
int cmd_index(const std::string& path, const std::string& output, uint64_t every);
int cmd_symbolize(const std::vector<std::string>& paths);
// 0, or 1 when the trace cannot be read or holds a record it cannot decode.
int cmd_dump(const std::string& path);

struct ExportOptions {
  std::string format;               // memviz, chrome, folded or jsonl
  std::vector<std::string> paths;   // traces
  std::string output;               // file (jsonl: directory); empty or "-": stdout
  std::string at;                   // folded: a moment (live_time.h) ...
  bool at_given = false;            // ... if --at was given (an empty one is an error); else peak
  bool zstd = false;                // jsonl: NAME.jsonl.zst
};
int cmd_export(const ExportOptions& opt);

}  // namespace cumemtrace
