// Naming and creating the trace file, and the records it starts with.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/trace_start.h"

namespace cumemtrace::interpose {

// Expands CUMEMTRACE_OUTPUT with this process's fields (cumemtrace/rules/output_pattern.h:
// %p pid, %h host name, %r rank (RANK, else LOCAL_RANK, else the pid), %% a percent sign;
// no field holds a '/' or a "..").
std::string expand_output_pattern(const std::string& pattern);

// Creates the file with `preamble` already in it (0600, never through a symlink, never
// over an existing file: a taken name gets ".1", ".2", ...). The name appears only once
// the preamble is written, so no trace is ever 0 bytes, whenever the process dies.
// A directory at `path` gets the default name inside it; a device, FIFO or socket the
// default name in the current directory; a symbolic link (never followed, whatever it
// points at) is a taken name (each with a warning). The directory is reached through no link inside /proc
// (include/cumemtrace/rules/no_follow.h). Returns the fd or -1
// (errno set); `path` becomes the name actually used.
int create_trace_file(std::string& path, std::string_view preamble);

// FileHeader (naming the trace `trace_id`), ProcessRecord and one ApiNameRecord per hooked
// entry point.
std::string trace_preamble(const TraceStart& start, uint64_t trace_id);

// A trace's identity (format 1.10, FileHeader::trace_id): random, never 0, never waits for
// the kernel's entropy.
uint64_t new_trace_id();

// Appends "PREFIX PATH\n" (PATH absolute) to CUMEMTRACE_MANIFEST if set: how `cumemtrace
// run` finds traces (no prefix) and learns of a failed allocation (format::kManifestOomPrefix).
void announce_in_manifest(const std::string& path, std::string_view prefix = {});

}  // namespace cumemtrace::interpose
