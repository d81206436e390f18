// A thread's open ranges, innermost last, keeping the names of the 64 innermost, so that a
// pop can name the range it closes (RangeEnd records). A deeper push is counted, but its pop
// names no range. NVTX pushes (nvtx.cpp) and tags (api.cpp) each keep one per thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cumemtrace::interpose {

class NamedStack {
 public:
  static constexpr size_t kMaxNamed = 64;

  // Returns the depth before the push.
  size_t push(std::string name) {
    if (depth_ < kMaxNamed) names_.resize(depth_), names_.push_back(std::move(name));
    return depth_++;
  }
  // False when no range is open. Else the range is closed and `name` is its name, or null
  // past the named ones; valid until the next push.
  bool pop(const std::string*& name) {
    if (depth_ == 0) return false;
    const size_t closed = --depth_;
    name = closed < names_.size() ? &names_[closed] : nullptr;
    return true;
  }
  size_t depth() const { return depth_; }

 private:
  size_t depth_ = 0;
  std::vector<std::string> names_;
};

}  // namespace cumemtrace::interpose
