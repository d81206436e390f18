// A hash table from a 64-bit address to a value, for the live sets of the tracer and of
// the analyzer's replay.
//
// Why not std::unordered_map: a replay does a find and an insert or erase per event, and
// the node-based table made a quarter of `report`'s time (docs/performance.md: a heap
// node per allocation, a pointer chase per lookup). This one is open addressing:
//   - keys and values in two flat arrays of power-of-two capacity; the probe reads the
//     key array only, so a lookup touches one or two cache lines;
//   - linear probing from mix(key): device addresses are aligned (512 B and up), so
//     their low bits are all zero and would pile into a few slots without a mixer; the
//     mixer is splitmix64's finalizer, which spreads every input bit over the output;
//   - deletion by backward shift (Knuth 6.4, algorithm R): no tombstones, so probes stay
//     as short after a million frees as after none;
//   - at most 3/4 full; the table doubles before an insert would pass that.
// One key value (kEmpty) marks a free slot; that address, should a trace hold it, lives
// in a slot of its own beside the arrays.
// Iteration order is unspecified (it depends on the hash and the history): callers that
// show what they iterate sort it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace cumemtrace {

template <class V>
class AddressMap {
 public:
  size_t size() const { return size_ + (has_empty_key_ ? 1 : 0); }
  bool empty() const { return size() == 0; }

  // The value stored under `key`, or nullptr. Valid until the next insert or erase.
  V* find(uint64_t key) {
    if (key == kEmpty) return has_empty_key_ ? &empty_key_value_ : nullptr;
    if (keys_.empty()) return nullptr;
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      if (keys_[i] == key) return &values_[i];
      if (keys_[i] == kEmpty) return nullptr;
    }
  }
  const V* find(uint64_t key) const { return const_cast<AddressMap*>(this)->find(key); }

  // Stores `value` under `key`, replacing what was there.
  void insert_or_assign(uint64_t key, V value) {
    if (key == kEmpty) {
      has_empty_key_ = true;
      empty_key_value_ = std::move(value);
      return;
    }
    if ((size_ + 1) * 4 > keys_.size() * 3) grow();
    size_t i = home(key);
    for (; keys_[i] != kEmpty; i = (i + 1) & mask_) {
      if (keys_[i] == key) {
        values_[i] = std::move(value);
        return;
      }
    }
    keys_[i] = key;
    values_[i] = std::move(value);
    ++size_;
  }

  // Removes `key`; returns whether it was there.
  bool erase(uint64_t key) {
    if (key == kEmpty) return std::exchange(has_empty_key_, false);
    if (keys_.empty()) return false;
    size_t hole = home(key);
    for (; keys_[hole] != key; hole = (hole + 1) & mask_)
      if (keys_[hole] == kEmpty) return false;
    // Pull back every later key of the run whose home is at or before the hole (cyclically),
    // so that no probe from its home meets an empty slot before reaching it.
    for (size_t j = (hole + 1) & mask_; keys_[j] != kEmpty; j = (j + 1) & mask_) {
      const size_t from_home = (j - home(keys_[j])) & mask_;
      const size_t from_hole = (j - hole) & mask_;
      if (from_home >= from_hole) {
        keys_[hole] = keys_[j];
        values_[hole] = std::move(values_[j]);
        hole = j;
      }
    }
    keys_[hole] = kEmpty;
    values_[hole] = V{};
    --size_;
    return true;
  }

  // Calls f(key, value) for every entry, in no particular order.
  template <class F>
  void for_each(F&& f) const {
    if (has_empty_key_) f(kEmpty, empty_key_value_);
    for (size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] != kEmpty) f(keys_[i], values_[i]);
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t(0);
  static constexpr size_t kMinCapacity = 64;

  static uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
  size_t home(uint64_t key) const { return size_t(mix(key)) & mask_; }

  void grow() {
    std::vector<uint64_t> keys(keys_.empty() ? kMinCapacity : keys_.size() * 2, kEmpty);
    std::vector<V> values(keys.size());
    keys.swap(keys_);
    values.swap(values_);
    mask_ = keys_.size() - 1;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == kEmpty) continue;
      size_t j = home(keys[i]);
      while (keys_[j] != kEmpty) j = (j + 1) & mask_;
      keys_[j] = keys[i];
      values_[j] = std::move(values[i]);
    }
  }

  std::vector<uint64_t> keys_;  // kEmpty where free
  std::vector<V> values_;
  size_t mask_ = 0;  // keys_.size() - 1
  size_t size_ = 0;  // entries in the arrays (the kEmpty key's not counted)
  bool has_empty_key_ = false;
  V empty_key_value_{};
};

}  // namespace cumemtrace
