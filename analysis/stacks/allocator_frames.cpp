#include "stacks/allocator_frames.h"

#include <regex.h>

#include <memory>
#include <stdexcept>

namespace cumemtrace {
namespace {

const char* const kDefaults[] = {
    // PyTorch
    "^c10::cuda::CUDACachingAllocator::", "^c10::cuda::CUDAAllocator", "^c10::cuda::MemPool",
    "^at::detail::empty_", "^at::(native::|_ops::|cuda::)?empty", "^at::native::(resize_|create_out|structured_.*set_output)",
    "^at::TensorBase::", "^c10::StorageImpl", "^c10::Allocator", "^c10::DataPtr", "set_output_raw_strided",
    // CuPy
    "cupy.*[Mm]emory(Pool|Pointer)|cupy_backends.*malloc|__pyx_.*4cupy.*memory",
    // XLA / stream_executor
    "^stream_executor::.*(Allocat|DeviceMemory)", "^xla::.*Allocat", "^tsl::BFCAllocator", "^tensorflow::.*BFCAllocator",
    // RMM
    "^rmm::mr::",
    // The CUDA runtime linked statically into another module (CuPy's extensions, static
    // programs): the module is not libcudart, its functions are.
    "^libcudart_static_", "^cuda[A-Z][A-Za-z0-9_]*$",
};

// POSIX extended regular expressions, matched by glibc's automaton: its time grows with
// the name's length and the pattern's size, never exponentially as a backtracking
// matcher's does on a pattern like (a+)+$. Back-references, which would bring that back,
// are refused.
class Pattern {
 public:
  explicit Pattern(const std::string& text) {
    for (size_t i = 0; i + 1 < text.size(); ++i)
      if (text[i] == '\\' && text[i + 1] >= '1' && text[i + 1] <= '9')
        throw std::invalid_argument("'" + text + "': back-references are not supported");
    if (const int rc = regcomp(&re_, text.c_str(), REG_EXTENDED | REG_NOSUB)) {
      char why[256];
      regerror(rc, &re_, why, sizeof why);
      throw std::invalid_argument("'" + text + "': " + why);
    }
  }
  ~Pattern() { regfree(&re_); }
  Pattern(const Pattern&) = delete;
  Pattern& operator=(const Pattern&) = delete;
  bool search(std::string_view s) const {
    regmatch_t range{0, regoff_t(s.size())};  // REG_STARTEND: the view needs no NUL
    return regexec(&re_, s.data(), 1, &range, REG_STARTEND) == 0;
  }

 private:
  regex_t re_{};
};

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
