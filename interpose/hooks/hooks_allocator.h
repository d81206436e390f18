// Bodies of the allocator hooks (hook_table.def, ALLOCATOR_HOOK): what PyTorch's CUDA
// caching allocator reports about the blocks inside the segments it took from the driver.
//
// Why these two functions: libc10_cuda.so calls c10::reportMemoryUsageToProfiler for every
// block it hands out (positive size) and every block the program frees (negative size),
// and c10::reportOutOfMemoryToProfiler before it raises its own out-of-memory error, with
// the allocator's allocated and reserved bytes, whether or not a profiler listens. They
// live in libc10.so and libc10_cuda.so imports them, so a preloaded definition is the one
// it calls: no Python, no import of torch, nothing the program must do (docs/validation.md,
// "What PyTorch's caching allocator tells about its blocks"). What they cannot tell: the
// requested bytes, streams, pools, and frees that wait on other streams' events (a free is
// reported when the program frees): those come from the allocator's trace entries, which
// these reports then carry (torch_trace_entries.h).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/config.h"
#include "hook_ids.h"
#include "hooks/torch_trace_entries.h"
#include "resolve/framework_version.h"
#include "stacks/walk_stats.h"
#include "track/call.h"
#include "track/tracker.h"

namespace cumemtrace::interpose {

// c10::Device: a DeviceType and a DeviceIndex, both int8_t; passed in a register.
struct TorchDevice {
  int8_t type;
  int8_t index;
};
inline constexpr int8_t kTorchCuda = 1;  // c10::DeviceType::CUDA

// What the BlockSource record says of the allocator, worked out at its first report.
inline const BlockSourceFacts& torch_source(const void* real) {
  // Never destroyed: the allocator frees tensors while the process exits.
  static const auto* facts = [real] {
    struct Owned {
      std::string version, settings;
      BlockSourceFacts facts;
    };
    auto* o = new Owned;
    o->version = torch_version_of(real);
    for (const char* name : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"})
      if (const char* v = std::getenv(name)) {
        o->settings = std::string(name) + "=" + v;
        break;
      }
    o->facts = {format::BlockAllocator::kPyTorch, o->version, o->settings};
    return o;
  }();
  return facts->facts;
}

void on_torch_memory_usage(HookId, auto real, void* ptr, int64_t size, size_t allocated, size_t reserved,
                           TorchDevice device) {
  const PartTimer timer(HookPart::kUsageReport);
  if (real) real(ptr, size, allocated, reserved, device);
  if (device.type != kTorchCuda || size == 0 || !ptr || !config().blocks) return;
  BlockDraft d;
  d.op = size > 0 ? format::BlockOp::kAlloc : format::BlockOp::kFree;
  d.address = bits(ptr);
  d.size = size > 0 ? uint64_t(size) : uint64_t(0) - uint64_t(size);
  d.allocated = allocated, d.reserved = reserved;
  d.device = device.index;
  d.flags = format::kBlockUsageReport;
  merge_torch_trace_entry(d);
  const BlockSourceFacts& source = torch_source(reinterpret_cast<const void*>(real));
  track_block(d, source);
  attach_torch_trace_tracker(reinterpret_cast<const void*>(real), source);
}

void on_torch_out_of_memory(HookId, auto real, int64_t size, size_t allocated, size_t reserved, TorchDevice device) {
  if (device.type == kTorchCuda && config().blocks) {
    BlockDraft d;
    d.op = format::BlockOp::kOom;
    d.size = size > 0 ? uint64_t(size) : 0;
    d.allocated = allocated, d.reserved = reserved;
    d.device = device.index;
    d.flags = format::kBlockUsageReport;
    merge_torch_trace_entry(d);
    track_block(d, torch_source(reinterpret_cast<const void*>(real)));
  }
  if (real) real(size, allocated, reserved, device);
}

}  // namespace cumemtrace::interpose
