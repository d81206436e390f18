// A thread's recent stacks kept whole, native and Python together, with the ids the two
// trees gave them. A block event inside a caching allocator comes between two tensors'
// worth of the job's own work, which evicts the trees from the CPU's caches: interning
// from the thread's previous stack (stack_memo.h) then cost a hash-table lookup, a miss or
// two each, for every frame that changed, ~1,400 cycles a block event on an H100 host,
// most of the time under the tracker's lock (docs/performance.md, "A tensor's event on
// the job's CPU"). A stack seen lately instead costs one hash of frames the walk has just
// written and one comparison of an entry laid out in a row.
//
// Why this is sound: the reason a memo is (stack_memo.h). A tree's node is a function of
// the frames of its prefix as recorded, and ids are never reused, so equal recorded frames
// have the ids they had; an entry is only taken when every frame equals, byte for byte.
// The cache only saves lookups. It lives with the trees it names (the tracker's State).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "stacks/python_walk.h"
#include "stacks/stack.h"

namespace cumemtrace::interpose {

class StackPairCache {
 public:
  static constexpr uint32_t kEntries = 128;  // a power of two
  // Longer stacks are not kept: the defaults walk at most 32 native frames, and a model's
  // forward pass is some 10-30 Python frames deep.
  static constexpr uint32_t kNative = 32, kPython = 32;

  struct Ids {
    uint32_t native, python;
  };

  static uint64_t hash(const RawStack& n, const PyRawStack& p) {
    uint64_t h = stack_hash_ips(uint64_t(n.count) << 32 | p.count, n);
    for (uint32_t k = 0; k < p.count; ++k)
      h = stack_hash_step(h, p.frames[k].code ^ uint64_t(uint32_t(p.frames[k].offset)) << 7);
    return stack_hash_end(h);
  }

  // The ids kept for exactly these frames (`h` their hash()); false when none are.
  bool find(uint64_t h, const RawStack& n, const PyRawStack& p, Ids& out) const {
    if (!entries_) return false;
    const Entry& e = entries_[h & (kEntries - 1)];
    if (e.hash != h || e.native_count != n.count || e.python_count != p.count || !e.kept) return false;
    if (std::memcmp(e.ip, n.ip, n.count * sizeof n.ip[0]) != 0) return false;
    if (std::memcmp(e.frame, p.frames, p.count * sizeof p.frames[0]) != 0) return false;
    out = e.ids;
    return true;
  }

  // Keeps `ids` for these frames, in place of whatever had their slot.
  void keep(uint64_t h, const RawStack& n, const PyRawStack& p, Ids ids) {
    if (n.count > kNative || p.count > kPython) return;
    if (!entries_) entries_ = std::make_unique<Entry[]>(kEntries);
    Entry& e = entries_[h & (kEntries - 1)];
    e.hash = h;
    e.native_count = n.count, e.python_count = p.count;
    e.ids = ids;
    e.kept = 1;
    std::memcpy(e.ip, n.ip, n.count * sizeof n.ip[0]);
    std::memcpy(e.frame, p.frames, p.count * sizeof p.frames[0]);
  }

 private:
  static_assert(std::has_unique_object_representations_v<PyRawFrame>);  // compared as bytes
  // The header and the first frames share a cache line; the frames follow in a row.
  struct Entry {
    uint64_t hash;
    uint16_t native_count, python_count;
    uint32_t kept;
    Ids ids;
    uint64_t ip[kNative];
    PyRawFrame frame[kPython];
  };
  std::unique_ptr<Entry[]> entries_;  // made at the first keep(): threads that never allocate cost nothing
};

}  // namespace cumemtrace::interpose
