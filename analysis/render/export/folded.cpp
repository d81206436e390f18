#include "render/export/folded.h"

#include <map>
#include <string>

#include "base/escape.h"
#include "render/export/export_frames.h"
#include "reports/stack_profile.h"

namespace cumemtrace {
namespace {

// One frame of a folded line: printable (escape.h), and no ';', which separates frames.
std::string clean(std::string_view frame) {
  std::string s = printable(frame);
  for (char& c : s)
    if (c == ';') c = ',';
  return s;
}

}  // namespace

void FoldedStacks::add(const Trace& t, const EventSource& events, uint64_t at_ns, bool name_process) {
  std::vector<FoldedFrame> prefix;
  if (name_process && t.process)
    prefix.push_back(
        {t.process->rank >= 0 ? "rank " + std::to_string(t.process->rank) : "pid " + std::to_string(t.process->pid), "",
         0});
  ExportFrames frames(t);
  StackProfile live;
  add_live_at(live, events, t.granule(), at_ns);
  for (const auto& [key, figures] : live) {
    const auto& [d, stack_id, python_stack_id] = key;
    std::vector<FoldedFrame> stack = prefix;
    stack.push_back({"cuda:" + std::to_string(d), "", 0});
    const auto& fs = frames.of(stack_id, python_stack_id);
    for (auto f = fs.rbegin(); f != fs.rend(); ++f)
      stack.push_back({clean(describe(*f, FrameStyle::kExport)), f->file, f->line});
    if (fs.empty()) stack.push_back({"[no stack]", "", 0});
    std::string line;
    for (const FoldedFrame& f : stack) line += (line.empty() ? "" : ";") + f.name;
    FoldedStack& s = lines_[line];
    if (s.frames.empty()) s.frames = std::move(stack);
    s.bytes += figures.live_bytes;
  }
}

uint64_t FoldedStacks::write(std::ostream& out) const {
  uint64_t total = 0;
  for (const auto& [line, stack] : lines_) {
    out << line << ' ' << stack.bytes << '\n';
    total += stack.bytes;
  }
  out.flush();
  return total;
}

uint64_t write_folded(std::ostream& out, const std::vector<FoldedInput>& inputs) {
  FoldedStacks stacks;
  for (const FoldedInput& in : inputs)
    stacks.add(*in.trace, MemoryEvents(in.trace->events), in.at_ns, inputs.size() > 1);
  return stacks.write(out);
}

}  // namespace cumemtrace
