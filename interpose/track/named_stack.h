// A thread's open ranges, innermost last, keeping the names of the 64 innermost, so that a
// pop can name the range it closes (RangeEnd records). A deeper push is counted, but its pop
// names no range: the caller counts that pop (track_bounded), so the trace says so. NVTX
// pushes (api/nvtx.cpp) keep one per thread and domain (ThisThread); tags keep theirs per
// Python context (context_tags.cpp), under the same bound.
#pragma once

#include <pthread.h>

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

// The calling thread's T (a NamedStack, or a set of them) of one kind (Tag), or null once
// the thread has ended.
// Calls come late: exit() destroys thread_local objects before the atexit handlers and the
// libraries' destructors, and a thread's before its pthread key destructors, and those push
// and pop NVTX ranges (compute-sanitizer's own libraries pop hundreds at exit, H200 run AR).
// A thread_local NamedStack was used destroyed then, and the process died of it at exit.
// So the stack hangs on a pthread key: its destructor frees it in the thread's key
// destructor rounds (also one first made by another key's destructor, in the next round);
// after the last round `t_gone` (no destructor, readable to the thread's end) stops a new
// one. The main thread's stack lives until the process ends.
template <class Tag, class T = NamedStack>
class ThisThread {
 public:
  static T* stack() {
    if (t_gone) return nullptr;
    const pthread_key_t k = key();
    auto* s = static_cast<T*>(pthread_getspecific(k));
    if (!s) {
      s = new T;
      if (pthread_setspecific(k, s) != 0) {
        delete s;
        return nullptr;
      }
    }
    return s;
  }
  // The same, but null where the thread has made none.
  static T* existing() { return t_gone ? nullptr : static_cast<T*>(pthread_getspecific(key())); }

 private:
  static pthread_key_t key() {
    static const pthread_key_t k = [] {
      pthread_key_t made;
      pthread_key_create(&made, [](void* s) {
        delete static_cast<T*>(s);
        t_gone = true;
      });
      return made;
    }();
    return k;
  }
  static inline thread_local bool t_gone = false;
};

}  // namespace cumemtrace::interpose
