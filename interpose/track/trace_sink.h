// What the tracker asks of the trace file's owner (write/writer.cpp defines both). They
// are declared here, below the writer, so that the tracker does not include it: the writer
// reads the tracker (its pending records, its snapshots), never the other way round.
// A plain call, resolved when the stages are linked into one library: no pointer to
// set at load, so an allocation made before our constructor still starts the file.
#pragma once

namespace cumemtrace::interpose {

void start_writer();  // from the first tracked event
void wake_writer();   // flush soon (after a failed allocation)

}  // namespace cumemtrace::interpose
