// The stack of an allocation as the exports show it: the same frames as the text report
// (stacks.h: from the call site outward, past the tracer, CUDA and allocator frames;
// python_stacks.h: Python frames merged in where the trace has them; names from the
// trace's Symbol records, written by `cumemtrace symbolize`), computed once per distinct
// (native stack, Python stack) pair. A frame reads as describe(f, FrameStyle::kExport) has it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "read/reader.h"
#include "stacks/stacks.h"

namespace cumemtrace {

class ExportFrames {
 public:
  explicit ExportFrames(const Trace& trace) : stacks_(trace) {}
  // With the symbols `stacks` has (set_symbols: an unsymbolized trace's, resolved in memory).
  explicit ExportFrames(const Stacks& stacks) : stacks_(stacks) {}

  // Innermost first; empty when the event has no stack.
  const std::vector<Frame>& of(uint32_t stack_id, uint32_t python_stack_id);

  const Stacks& stacks() const { return stacks_; }

 private:
  Stacks stacks_;
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Frame>> cache_;
};

}  // namespace cumemtrace
