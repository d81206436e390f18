// `cumemtrace export --format folded`: folded stacks of the device memory live at one
// moment, for flamegraph.pl, speedscope and inferno. What those readers accept:
// docs/formats.md, "Folded stacks".
//
// One line per distinct stack: frames root first, joined by ';', one space, the live
// bytes (an integer) held by the allocations made there; '\n' ends each line. The root
// frame is the device, "cuda:0"; with several traces it is preceded by the process,
// "rank 3" (or "pid 4242" without a rank). Frames are named as export_frames.h says; an
// allocation without a stack is "[no stack]". A ';' inside a name becomes ',' and line
// breaks become spaces, since no consumer can escape them. Lines are sorted, so the same
// trace always gives the same file.
//
// Live = what `cumemtrace live --at` counts as device bytes at that moment (replay.h
// replay_until: events at or before it; kinds that hold device memory), so the counts
// of one device add up to its tracked device bytes then.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "read/reader.h"
#include "read/event_source.h"

namespace cumemtrace {

// A frame of a line: its text as the line has it and, where the trace knows them, the
// source file and line it came from (the process, device and "[no stack]" frames have
// neither), for an export that shows them apart (speedscope.h).
struct FoldedFrame {
  std::string name;
  std::string file;   // empty: unknown
  uint32_t line = 0;  // 0: unknown
};

// One line: its frames, root first, and the live bytes held there.
struct FoldedStack {
  std::vector<FoldedFrame> frames;
  uint64_t bytes = 0;
};

// The lines of several traces, added one at a time (a trace read in passes,
// event_source.h, is replayed from a scan of its file), then written together.
class FoldedStacks {
 public:
  // The device memory live in `t` at `at_ns` (CLOCK_MONOTONIC), its events read from
  // `events`; `name_process`: each line starts with the process's frame.
  void add(const Trace& t, const EventSource& events, uint64_t at_ns, bool name_process);
  // Returns the bytes in all lines.
  uint64_t write(std::ostream& out) const;

  // Each line's stack by its text, in the order write() puts them; stacks whose frames
  // read alike are one line, with the frames of the first.
  const std::map<std::string, FoldedStack>& stacks() const { return lines_; }

 private:
  std::map<std::string, FoldedStack> lines_;  // sorted: the same traces give the same file
};

struct FoldedInput {
  const Trace* trace = nullptr;
  uint64_t at_ns = 0;  // CLOCK_MONOTONIC
};

// Traces holding their events; the process frame when there are several. Returns the
// bytes written out in all lines.
uint64_t write_folded(std::ostream& out, const std::vector<FoldedInput>& inputs);

}  // namespace cumemtrace
