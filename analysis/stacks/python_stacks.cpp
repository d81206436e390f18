#include "stacks/python_stacks.h"

#include <string_view>

namespace cumemtrace {

std::vector<Frame> python_frames(const Trace& trace, uint32_t python_stack_id) {
  std::vector<Frame> out;
  const auto name = [&](uint32_t id) {
    auto it = trace.py_strings.find(id);
    return it == trace.py_strings.end() ? std::string("?") : it->second;
  };
  // A damaged file could make parents loop; no stack is deeper than the tree is big.
  for (uint32_t id = python_stack_id; id != 0 && out.size() < trace.py_frames.size();) {
    auto it = trace.py_frames.find(id);
    if (it == trace.py_frames.end()) break;
    const PyFrameNode& n = it->second;
    Frame f;
    f.python = true;
    f.entry = n.flags & format::kPyFrameEntry;
    f.file = name(n.file);
    f.function = name(n.function);
    f.line = n.line > 0 ? uint32_t(n.line) : 0;
    out.push_back(std::move(f));
    id = n.parent;
  }
  return out;
}

bool is_eval_frame(const Frame& f) {
  return !f.python && std::string_view(f.function).find("_PyEval_EvalFrameDefault") != std::string_view::npos;
}

std::vector<Frame> merge_stacks(const std::vector<Frame>& native, const std::vector<Frame>& python) {
  // Groups innermost first: a group ends (outwards) at its entry frame.
  std::vector<std::vector<Frame>> groups;
  for (const Frame& f : python) {
    if (groups.empty()) groups.emplace_back();
    groups.back().push_back(f);
    if (f.entry) groups.emplace_back();
  }
  if (!groups.empty() && groups.back().empty()) groups.pop_back();
  std::vector<Frame> out;
  size_t next = 0;
  for (const Frame& f : native) {
    if (is_eval_frame(f) && next < groups.size()) {
      out.insert(out.end(), groups[next].begin(), groups[next].end());
      ++next;
    } else {
      out.push_back(f);
    }
  }
  for (; next < groups.size(); ++next) out.insert(out.end(), groups[next].begin(), groups[next].end());
  return out;
}

}  // namespace cumemtrace
