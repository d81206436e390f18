// The sink the tracker owns and writes its records into: the trace file's writer
// (write/writer.cpp), as memray's tracker owns its record writer. Declared here, below the
// writer, so that the tracker does not include it; the writer never calls the tracker: it
// is handed the records to write, and says only whether it still can.
//
// The sink is not thread-safe: its owner, the writer thread (writer_thread.cpp), calls it
// from one thread at a time under its write lock, which a fatal signal's handler tries
// before it calls the `_in_signal_handler` functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cumemtrace::interpose {

enum class SinkState {
  kOpening,  // the file is yet to be created
  kOpen,
  kBroken,  // closed, or never made, or a write failed: nothing more is written
};

class TraceSink {
 public:
  // Creates the trace file, its preamble already written (trace_file.h). False when none
  // could be made (said on stderr): tracing stops.
  virtual bool open() = 0;
  // Once a round of the writer thread, before its snapshot: puts back what the program may
  // have undone past our hooks (fatal_signal.h: a SIG_DFL set through a raw system call).
  virtual void keep_up() = 0;
  // A record for each object loaded since the last call.
  virtual void write_modules() = 0;
  // Writes `chunks` (whole encoded records, cut anywhere) and seals what was written since
  // the last seal; once the trace is broken, drops them. False once it is broken (a full
  // disk, a vanished file; said once on stderr): tracing stops.
  virtual bool write_records(std::vector<std::string>& chunks) = 0;
  // After a write, with the failed allocations so far: when more failed since the last
  // time, tells `cumemtrace run`, which writes the post-mortem while the job still runs.
  virtual void announce_failures(uint64_t failed) = 0;
  // Nothing more goes to the file, even from a late exec.
  virtual void close() = 0;

  // In a fatal signal's handler, async-signal-safe (write(2) alone): appends `chunk` to
  // the chunk being written, then seals it; nothing is written after the end.
  virtual SinkState state() const = 0;
  virtual void write_in_signal_handler(std::string_view chunk) = 0;
  virtual void end_in_signal_handler() = 0;

  // In a forked child: the parent's file is closed; the sink is then forgotten, never
  // destroyed (the parent's thread may have left it mid-write).
  virtual void after_fork_child() = 0;

 protected:
  ~TraceSink() = default;
};

// A plain call, resolved when the stages are linked into one library: no pointer to set
// at load, so an allocation made before our constructor still starts the file.
TraceSink* make_trace_sink();  // the writer (write/writer.cpp)
// Once the trace's thread runs: what starts with the trace beyond the tracker (the spine,
// lifecycle.cpp, which alone sees every stage: the fatal-signal handlers, NVTX's check).
void on_trace_start();
// main is about to run (hooks_start.h; lifecycle.cpp): libc's handlers registered from now
// on run before the loader's finalizers.
void on_main_start();

}  // namespace cumemtrace::interpose
