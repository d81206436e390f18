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

#include "read/reader.h"

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
  bool ok = false;           // false: the file could not be read or written
  bool already = false;      // every resolvable ip already had a SymbolRecord; nothing done
  bool cut_partial = false;  // unreadable trailing bytes (a cut-off record) were left out
  size_t appended = 0;
  size_t events = 0;
  SymbolizeStats stats;
  std::string message;  // why !ok
};

// Adds one SymbolRecord per resolved ip that has none yet to the trace at `path`
// (symbolize_file.cpp). Never destroys data: the result is written to a new file, read
// back, and renamed over the old one only when every record read from the old one is
// in it; otherwise the old file stays as it was. Unreadable trailing bytes (a record cut
// off when the writer was killed) are left out, since records appended after them could
// not be reached; damage in the middle is kept verbatim and read past, as before.
// Idempotent: a file whose every resolvable ip has a symbol is left alone; a partly
// written symbol section is completed.
SymbolizeFileResult symbolize_file(const std::string& path);

}  // namespace cumemtrace
