#include "render/export/export_frames.h"

#include "stacks/python_stacks.h"
#include "base/units.h"

namespace cumemtrace {

const std::vector<Frame>& ExportFrames::of(uint32_t stack_id, uint32_t python_stack_id) {
  auto [it, fresh] = cache_.try_emplace({stack_id, python_stack_id});
  if (!fresh) return it->second;
  std::vector<Frame> native;
  if (stack_id) native = stacks_.frames(stacks_.call_site(stack_id).node, SIZE_MAX);
  const std::vector<Frame> python = python_frames(stacks_.trace(), python_stack_id);
  it->second = python.empty() ? std::move(native) : merge_stacks(native, python);
  return it->second;
}

}  // namespace cumemtrace
