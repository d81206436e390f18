// Turning the trace's return addresses into function, file and line, with elfutils.
//
// Symbolization runs where the modules' files are: `cumemtrace run` does it right
// after the job, on the machine that ran it, and appends the answers to the trace as
// SymbolRecords, so the trace can be reported anywhere later. A module file is only
// trusted when its build-id matches the one recorded (when both are known): a library
// upgraded since the run would otherwise give confidently wrong lines.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "cumemtrace/reader.h"

namespace cumemtrace {

struct SymbolizeStats {
  size_t ips = 0;               // distinct ips in the stack nodes
  size_t resolved = 0;          // ips given a function or a line
  size_t modules_missing = 0;   // module files not found locally
  size_t modules_mismatch = 0;  // build-id differs from the recorded one
};

// Resolves every distinct ip of the trace's stack nodes whose module file is present.
// An ip with neither function nor line is left out.
std::unordered_map<uint64_t, Symbol> resolve_symbols(const Trace& trace, SymbolizeStats* stats = nullptr);

struct SymbolizeFileResult {
  bool ok = false;             // false: the file could not be read or written
  bool already = false;        // the file had SymbolRecords already; nothing done
  bool cut_partial = false;    // a partial trailing record was truncated away first
  size_t appended = 0;
  size_t events = 0;
  SymbolizeStats stats;
  std::string message;         // why !ok
};

// Appends one SymbolRecord per resolved ip to the trace at `path`. Idempotent: a file
// that already holds SymbolRecords is left alone. A partial trailing record (the
// writer was killed mid-record) is truncated first so that the result stays readable.
SymbolizeFileResult symbolize_file(const std::string& path);

}  // namespace cumemtrace
