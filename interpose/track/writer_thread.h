// The writer thread, started with the trace (the first tracked event): it owns the
// sink (trace_sink.h) and, at least every CUMEMTRACE_FLUSH_MS (<= 100 ms), hands it the
// records waiting in the tracker, and it keeps the snapshot schedule: one every
// CUMEMTRACE_SNAPSHOT_MS, one when a peak rose since the last, one at exit.
#pragma once

#include <string_view>

namespace cumemtrace::interpose {

void start_writer_thread();  // from the first tracked event (tracker_state.cpp: state())
void wake_writer_thread();   // flush soon (after a failed allocation)

void finish_trace();  // at exit: exit snapshot, end record, final flush; bounded wait
// The status the process is exiting with (exit's, through an on_exit handler; _exit's), for
// the EndRecord (1.15); until noted it reads unknown.
void note_exit_status(int status);
// Before an exec replaces the image (no destructor runs then): appends an End record that
// says the process exec'd into `target` (trace_format.h: EndReason::kExec) and writes what
// is pending, so the trace ends whole at the exec. If the exec fails, tracing simply goes
// on (the reader then sets that End record aside).
void flush_before_exec(std::string_view target);
// From a fatal signal's handler (write/fatal_signal.h), async-signal-safe: writes what is
// pending with write(2) alone, waiting at most ~2 s for the file to exist and for the
// locks (the writer thread goes on meanwhile); nothing is written after it.
void flush_in_signal_handler();

// Around a fork (lifecycle.cpp): the thread pauses between rounds (base/worker.h); a
// child gets a thread and a file of its own at its first tracked event.
void writer_thread_prepare_fork();
void writer_thread_after_fork_parent();
void writer_thread_after_fork_child();

}  // namespace cumemtrace::interpose
