// The events of a trace as the analyzer holds them: Event (one EventRecord, unpacked) and
// EventLog, the sequence of them in file order, packed to 32 bytes an event.
//
// Why packed: every event of a trace is kept (replays go over them several times), and an
// Event is 72 bytes: 720 MB for 10 M events, past the analyzer's 500 MB budget on its own
// (docs/performance.md, "Analyzer: speed and memory"). Most of an Event's fields take few
// values over a whole trace (thread, device, entry point, op, kind, flags, result,
// stream), so EventLog stores each distinct combination of them once, in a table, and
// an event as
//   address (8 B) | size (8 B) | time: ns after its group's base (4 B) | stack id (4 B)
//   | index into the combination table (4 B) | Python stack id (4 B)
// A group is kGroup consecutive events; its base is its first event's time. An event that
// does not fit this form (a VMM or pool handle, a time before its group's base or 2^32 ns
// or more after it, a full combination table) is kept whole in a side table, and its
// packed slot says where (combination index kWhole, the side table's index in
// `address`). So every Event comes back exactly as it was pushed, whatever its values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "cumemtrace/trace_format.h"

namespace cumemtrace {

struct Event {
  uint64_t time_ns = 0;
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t stream = 0;
  uint64_t handle = 0;
  uint32_t tid = 0;
  int32_t device = -1;
  uint32_t stack_id = 0;
  int32_t result = 0;
  uint16_t api = 0;
  format::Op op{};
  format::Kind kind{};
  uint32_t flags = 0;
  uint32_t python_stack_id = 0;  // 1.6: innermost PyFrameNode; 0: no Python frames
};

// Trace::events. Indexing and iteration as a vector's, but an element is handed out by
// value (it is unpacked on the way out): bind it to `const Event&` or copy it; there is
// no address of an event to keep. Storage is in fixed blocks, so growing never copies
// what was read (a std::vector's doubling held the old and the new array at once).
class EventLog {
 public:
  static constexpr size_t kBlockShift = 16;
  static constexpr size_t kBlock = size_t(1) << kBlockShift;  // events a block (2 MiB packed)
  static constexpr size_t kGroupShift = 10;
  static constexpr size_t kGroup = size_t(1) << kGroupShift;  // events sharing a time base

  // What one event costs in memory when it packs: the figure bench/run_analyzer.sh's max
  // RSS follows.
  struct Packed {
    uint64_t address;
    uint64_t size;
    uint32_t time_delta;  // ns after the group's base
    uint32_t stack_id;
    uint32_t combo;  // index into combos_, or kWhole
    uint32_t python_stack_id;
  };
  static_assert(sizeof(Packed) == 32);
  static constexpr uint32_t kWhole = UINT32_MAX;

  template <class Log>
  class Iter {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Event;
    using difference_type = std::ptrdiff_t;
    using reference = Event;  // a value: events are unpacked when read
    struct pointer {
      Event e;
      const Event* operator->() const { return &e; }
    };
    Iter() = default;
    Iter(Log* log, size_t i) : log_(log), i_(i) {}
    reference operator*() const { return (*log_)[i_]; }
    pointer operator->() const { return {(*log_)[i_]}; }
    reference operator[](difference_type n) const { return (*log_)[i_ + n]; }
    Iter& operator++() {
      ++i_;
      return *this;
    }
    Iter operator++(int) {
      Iter t = *this;
      ++i_;
      return t;
    }
    Iter& operator--() {
      --i_;
      return *this;
    }
    Iter operator--(int) {
      Iter t = *this;
      --i_;
      return t;
    }
    Iter& operator+=(difference_type n) {
      i_ += n;
      return *this;
    }
    Iter& operator-=(difference_type n) {
      i_ -= n;
      return *this;
    }
    Iter operator+(difference_type n) const { return Iter(log_, i_ + n); }
    friend Iter operator+(difference_type n, Iter it) { return it + n; }
    Iter operator-(difference_type n) const { return Iter(log_, i_ - n); }
    difference_type operator-(const Iter& o) const { return difference_type(i_) - difference_type(o.i_); }
    bool operator==(const Iter& o) const { return i_ == o.i_; }
    auto operator<=>(const Iter& o) const { return i_ <=> o.i_; }

   private:
    Log* log_ = nullptr;
    size_t i_ = 0;
  };
  using iterator = Iter<const EventLog>;
  using const_iterator = iterator;
  using value_type = Event;

  EventLog() = default;
  EventLog(std::initializer_list<Event> events) {
    for (const auto& e : events) push_back(e);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Event operator[](size_t i) const {
    const Packed& p = blocks_[i >> kBlockShift][i & (kBlock - 1)];
    if (p.combo == kWhole) return whole_[p.address];
    const Combo& c = combos_[p.combo];
    Event e;
    e.time_ns = bases_[i >> kGroupShift] + p.time_delta;
    e.address = p.address;
    e.size = p.size;
    e.stream = c.stream;
    e.tid = c.tid;
    e.device = c.device;
    e.stack_id = p.stack_id;
    e.result = c.result;
    e.api = c.api;
    e.op = format::Op(c.op);
    e.kind = format::Kind(c.kind);
    e.flags = c.flags;
    e.python_stack_id = p.python_stack_id;
    return e;
  }
  Event back() const { return (*this)[size_ - 1]; }
  Event front() const { return (*this)[0]; }
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size_}; }

  void push_back(const Event& e) {
    if ((size_ & (kBlock - 1)) == 0) {
      blocks_.emplace_back();
      // The first block grows as it fills: most logs (a moment replayed from a checkpoint, a
      // small trace) hold far fewer events than a block, and 2 MiB each would be mostly unused.
      if (blocks_.size() > 1) blocks_.back().reserve(kBlock);
    }
    if ((size_ & (kGroup - 1)) == 0) bases_.push_back(e.time_ns);
    const uint64_t base = bases_.back();
    Packed p{e.address, e.size, uint32_t(e.time_ns - base), e.stack_id, kWhole, e.python_stack_id};
    if (e.handle != 0 || e.time_ns < base || e.time_ns - base > UINT32_MAX) {
      p.address = whole_.size();
      whole_.push_back(e);
    } else {
      const Combo c{e.stream, e.tid, e.device, e.flags, e.result, e.api, uint8_t(e.op), uint8_t(e.kind)};
      auto [it, added] = combo_ids_.try_emplace(c, uint32_t(combos_.size()));
      if (added) {
        if (combos_.size() == kWhole) {  // never in practice: 4 G distinct combinations
          combo_ids_.erase(it);
          p.address = whole_.size();
          whole_.push_back(e);
          blocks_.back().push_back(p);
          ++size_;
          return;
        }
        combos_.push_back(c);
      }
      p.combo = it->second;
    }
    blocks_.back().push_back(p);
    ++size_;
  }
  void clear() { *this = EventLog(); }

  // Events kept whole (not packed), for tests and the bench's explanation of memory.
  size_t whole_count() const { return whole_.size(); }

 private:
  // The fields of an Event that take few distinct values over a trace.
  struct Combo {
    uint64_t stream;
    uint32_t tid;
    int32_t device;
    uint32_t flags;
    int32_t result;
    uint16_t api;
    uint8_t op;
    uint8_t kind;
    bool operator==(const Combo&) const = default;
  };
  struct ComboHash {
    size_t operator()(const Combo& c) const {
      uint64_t h = c.stream * 0x9E3779B97F4A7C15ull;
      h ^= (uint64_t(c.tid) << 32 | uint32_t(c.device)) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
      h ^= (uint64_t(c.flags) << 32 | uint32_t(c.result)) + 0x8CB92BA72F3D8DD7ull + (h << 6) + (h >> 2);
      h ^= (uint64_t(c.api) << 16 | uint64_t(c.op) << 8 | c.kind) + (h << 6) + (h >> 2);
      return size_t(h);
    }
  };

  std::vector<std::vector<Packed>> blocks_;
  std::vector<uint64_t> bases_;  // a time base per kGroup events
  std::vector<Combo> combos_;
  std::unordered_map<Combo, uint32_t, ComboHash> combo_ids_;
  std::vector<Event> whole_;
  size_t size_ = 0;
};

}  // namespace cumemtrace
