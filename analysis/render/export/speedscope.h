// `cumemtrace export --format speedscope`: speedscope's own JSON file (docs/formats.md,
// "speedscope"), of the stacks folded.h finds live at one moment. Its one "sampled"
// profile has folded's lines as samples, in their order, each stack root first and
// weighted by its live bytes (unit "bytes"), so the weights sum to folded's bytes and each
// sample's frame names, joined by ';', are folded's line. A frame is in the file's shared
// table once, by its name, file and line; the file and the line are left out where the
// trace does not know them.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "render/export/folded.h"

namespace cumemtrace {

// Writes `stacks` as one profile called `name`; returns the bytes in all samples.
uint64_t write_speedscope(std::ostream& out, const FoldedStacks& stacks, const std::string& name);

}  // namespace cumemtrace
