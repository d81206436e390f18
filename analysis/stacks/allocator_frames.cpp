#include "stacks/allocator_frames.h"

#include <memory>

#include "stacks/frame_pattern.h"

namespace cumemtrace {
namespace {

const char* const kDefaults[] = {
    // PyTorch
    "^c10::cuda::CUDACachingAllocator::",
    "^c10::cuda::CUDAAllocator",
    "^c10::cuda::MemPool",
    "^at::detail::empty_",
    "^at::(native::|_ops::|cuda::)?empty",
    "^at::native::(resize_|create_out|structured_.*set_output)",
    "^at::TensorBase::",
    "^c10::StorageImpl",
    "^c10::Allocator",
    "^c10::DataPtr",
    "set_output_raw_strided",
    // CuPy
    "cupy.*[Mm]emory(Pool|Pointer)|cupy_backends.*malloc|__pyx_.*4cupy.*memory",
    // XLA / stream_executor
    "^stream_executor::.*(Allocat|DeviceMemory)",
    "^xla::.*Allocat",
    "^tsl::BFCAllocator",
    "^tensorflow::.*BFCAllocator",
    // RMM
    "^rmm::mr::",
    // The CUDA runtime linked statically into another module (CuPy's extensions, static
    // programs): the module is not libcudart, its functions are.
    "^libcudart_static_",
    "^cuda[A-Z][A-Za-z0-9_]*$",
    // NVTX's functions, compiled into each caller from its headers: a pool's region is
    // registered through nvtxMemRegionsRegister, and its call site is the pool's caller.
    "^nvtx[A-Z][A-Za-z0-9_]*$",
};

using Pattern = FramePattern;

struct AllocatorSettings {
  bool skip = true;
  std::vector<std::shared_ptr<const Pattern>> patterns;
  AllocatorSettings() { defaults(); }
  void defaults() {
    patterns.clear();
    for (const char* p : kDefaults) patterns.push_back(std::make_shared<const Pattern>(p));
  }
};

AllocatorSettings& allocator_settings() {
  static AllocatorSettings s;
  return s;
}

}  // namespace

void set_allocator_frames(const std::vector<std::string>& extra, bool skip) {
  std::vector<std::shared_ptr<const Pattern>> added;
  for (const auto& p : extra) added.push_back(std::make_shared<const Pattern>(p));
  AllocatorSettings& s = allocator_settings();
  s.skip = skip;
  s.defaults();
  s.patterns.insert(s.patterns.end(), added.begin(), added.end());
}

bool allocator_skip() { return allocator_settings().skip; }

bool is_allocator_frame(std::string_view function) {
  const AllocatorSettings& s = allocator_settings();
  if (!s.skip || function.empty()) return false;
  for (const auto& re : s.patterns)
    if (re->search(function)) return true;
  return false;
}

}  // namespace cumemtrace
