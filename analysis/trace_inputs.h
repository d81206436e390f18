// What the trace arguments of `report` (and `check`) name: trace files, folders of traces,
// or the manifest `cumemtrace run` writes (docs/cli.md).
#pragma once

#include <string>
#include <vector>

namespace cumemtrace {

// The traces a manifest lists (format::kManifestMarker's file): one path a line, '#'
// lines skipped, each path once, in order.
std::vector<std::string> read_manifest(const std::string& path);

// Each argument as the traces it names, in order, each path once: a folder gives the
// files directly in it that start with the trace magic (by name); a manifest the traces
// it lists; anything else is taken as a trace (the reader says if it is not one).
std::vector<std::string> expand_trace_inputs(const std::vector<std::string>& args);

}  // namespace cumemtrace
