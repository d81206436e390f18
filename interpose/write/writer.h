// The background thread that owns the trace file. Hooks never touch the disk: they
// append encoded records to the tracker's buffer, and this thread writes them out at
// least every CUMEMTRACE_FLUSH_MS (<= 100 ms), so a process killed with SIGKILL leaves a
// file readable up to its last flush. It also takes the periodic snapshots and scans
// for newly loaded modules.
//
// The file is created by this thread, lazily: a process that never touches CUDA gets
// none. It comes into being with its preamble already written (trace_file.h), mode
// 0600, never through a symlink nor over an existing file; a taken name gets ".N".
#pragma once

#include <string_view>

#include "track/trace_sink.h"  // start_writer, wake_writer: defined in writer.cpp

namespace cumemtrace::interpose {

void finish_writer();  // at exit: exit snapshot, end record, final flush; bounded wait
// Before an exec replaces the image (no destructor runs then): appends an End record that
// says the process exec'd into `target` (trace_format.h: EndReason::kExec) and writes what
// is pending, so the trace ends whole at the exec. If the exec fails, tracing simply goes
// on (the reader then sets that End record aside).
void flush_before_exec(std::string_view target);
// Around a fork: the writer's loop pauses between rounds (at most 50 ms waited for).
void writer_prepare_fork();
void writer_after_fork_parent();
void writer_after_fork_child();
// From a fatal signal's handler (fatal_signal.h), async-signal-safe: writes what is
// pending with write(2) alone, waiting at most ~2 s for the file to exist and for the
// locks (the writer thread goes on meanwhile); nothing is written after it.
void write_pending_in_signal_handler();

}  // namespace cumemtrace::interpose
