// A mapped trace cut short while the CLI reads it (a `truncate`, a copy over it) makes the
// next read of a page past its new end raise SIGBUS, which would kill the command (and,
// with several traces read in parallel, all of them). The guard catches that SIGBUS for the
// ranges registered here: it maps zero pages over the rest of the range, marks it cut, and
// lets the read go on; a zero page fails every chunk's checksum, and the caller, seeing
// cut(), says the file changed instead of reporting from it. A SIGBUS anywhere else is left
// to the handler that was there before (by default: the process dies, as it would have).
#pragma once

#include <cstddef>

namespace cumemtrace {

// Registers [data, data + size); returns a slot for the two calls below, or -1 when all
// slots are taken (then a cut of that mapping raises SIGBUS, as without the guard).
int guard_mapping(const void* data, size_t size);
bool mapping_cut(int slot);
void unguard_mapping(int slot);

}  // namespace cumemtrace
