// What the trace arguments of every command that reads traces name (`report`, `check`,
// `baseline`, `html`, `symbolize`, `export`): trace files, folders of traces, or the manifest
// `cumemtrace run` writes (docs/cli.md). One function, so every command and every spelling
// (a file, a folder, a manifest, a shell glob) gets the same traces, and so the same verdict
// on one that cannot be read: a trace is never skipped for being damaged or empty, the
// command reads it and says so.
#pragma once

#include <string>
#include <vector>

namespace cumemtrace {

// The traces a manifest lists (format::kManifestMarker's file): one path a line, escaped
// as include/cumemtrace/rules/manifest_line.h says, '#' lines skipped, each path once, in order.
std::vector<std::string> read_manifest(const std::string& path);

// Whether a file name is a trace's by its name: "*.trace", or "*.trace.N" (the library's
// name for a trace whose name was taken).
bool trace_file_name(const std::string& name);

// Each argument as the traces it names, in order, each file once: a folder gives the
// regular files in it and in its subfolders (a `run -o 'out/run-%p/t.trace'` job nests;
// links are not followed), by path, that start with the trace magic or are named as traces
// (trace_file_name: an empty or damaged one is then reported as such, not skipped); a
// manifest the traces it lists; anything else is taken as a trace (the reader says if it is
// not one).
std::vector<std::string> expand_trace_inputs(const std::vector<std::string>& args);

}  // namespace cumemtrace
