// A thread's open ranges, innermost last, keeping the names of the 64 innermost, so that a
// pop can name the range it closes (RangeEnd records). A deeper push is counted, but its pop
// names no range. NVTX pushes (nvtx.cpp) and tags (api.cpp) each keep one per thread
// (ThisThread).
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

// The calling thread's NamedStack of one kind (Tag), or null once the thread's thread_local
// destructors have run. Calls come after that: exit() runs them before the atexit handlers
// and the libraries' destructors, and those push and pop NVTX ranges (compute-sanitizer's
// own libraries pop hundreds at exit, H200 run AR). A thread_local NamedStack was used
// destroyed then, and the process died of it at exit (SIGSEGV under compute-sanitizer with
// this library as NVTX's tool). The pointer and the flag have no destructor, so they stay
// readable for the thread's whole life; the Reaper frees the stack and sets the flag.
template <class Tag>
class ThisThread {
 public:
  static NamedStack* stack() {
    if (t_gone) return nullptr;
    if (!t_stack) {
      t_stack = new NamedStack;
      t_reaper.arm();  // constructs it on this thread: its destructor runs at the thread's end
    }
    return t_stack;
  }

 private:
  struct Reaper {
    void arm() {}
    ~Reaper() {
      delete t_stack;
      t_stack = nullptr;
      t_gone = true;
    }
  };
  static inline thread_local NamedStack* t_stack = nullptr;
  static inline thread_local bool t_gone = false;
  static inline thread_local Reaper t_reaper;
};

}  // namespace cumemtrace::interpose
