// An ordered map from uint64 to uint64 kept in short sorted arrays, for the fragmentation
// index (flat_fragmentation.h) of the tracer and the analyzer.
//
// Why not std::map: the index does a neighbour lookup and an insert or erase per
// allocation and free, and the red-black tree's node per entry and pointer chasing were
// a quarter of `report`'s time (docs/performance.md). Here the entries sit in blocks of
// at most kMaxBlock, each sorted, the blocks in key order: a lookup is a binary search
// over the blocks' last keys (kept in an array of their own) then one inside a block, an insert or erase moves at most
// a block's entries (2 KiB), and neighbours are usually in the same cache lines. No block is ever empty; a block that
// would pass kMaxBlock is split in two. A position (Pos) is valid until the next insert or erase.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace cumemtrace {

class SortedBlocks {
 public:
  struct Entry {
    uint64_t key;
    uint64_t value;
  };
  struct Pos {
    size_t block = 0;
    size_t i = 0;
    bool operator==(const Pos&) const = default;
  };

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  Pos begin_pos() const { return {0, 0}; }
  Pos end_pos() const { return {blocks_.size(), 0}; }
  bool is_end(Pos p) const { return p.block == blocks_.size(); }

  // The first entry whose key is >= k, or end_pos().
  Pos lower_bound(uint64_t k) const {
    if (lasts_.empty()) return end_pos();
    const size_t b = first_not_less(lasts_.data(), lasts_.size(), k, [](uint64_t x) { return x; });
    if (b == blocks_.size()) return end_pos();
    const std::vector<Entry>& blk = blocks_[b];
    return {b, first_not_less(blk.data(), blk.size(), k, [](const Entry& x) { return x.key; })};
  }

  Pos next(Pos p) const { return p.i + 1 < blocks_[p.block].size() ? Pos{p.block, p.i + 1} : Pos{p.block + 1, 0}; }
  // Precondition: p is not begin_pos() and the map is not empty.
  Pos prev(Pos p) const {
    if (p.i > 0) return {p.block, p.i - 1};
    return {p.block - 1, blocks_[p.block - 1].size() - 1};
  }

  // The value may be changed through it, never the key (lasts_ would be wrong).
  Entry& at(Pos p) { return blocks_[p.block][p.i]; }
  const Entry& at(Pos p) const { return blocks_[p.block][p.i]; }
  // Precondition: not empty.
  const Entry& back() const { return blocks_.back().back(); }

  // Puts e just before p; the caller keeps the keys sorted and unique.
  void insert(Pos p, Entry e) {
    if (blocks_.empty()) {
      blocks_.emplace_back().push_back(e);
      lasts_.push_back(e.key);
      size_ = 1;
      return;
    }
    if (is_end(p)) p = {blocks_.size() - 1, blocks_.back().size()};
    std::vector<Entry>& blk = blocks_[p.block];
    blk.insert(blk.begin() + ptrdiff_t(p.i), e);
    ++size_;
    if (blk.size() <= kMaxBlock) {
      lasts_[p.block] = blk.back().key;
      return;
    }
    std::vector<Entry> upper(blk.begin() + ptrdiff_t(blk.size() / 2), blk.end());
    blk.resize(blk.size() / 2);
    lasts_[p.block] = blk.back().key;
    lasts_.insert(lasts_.begin() + ptrdiff_t(p.block + 1), upper.back().key);
    blocks_.insert(blocks_.begin() + ptrdiff_t(p.block + 1), std::move(upper));
  }

  void erase(Pos p) {
    std::vector<Entry>& blk = blocks_[p.block];
    blk.erase(blk.begin() + ptrdiff_t(p.i));
    --size_;
    if (!blk.empty()) {
      lasts_[p.block] = blk.back().key;
      return;
    }
    blocks_.erase(blocks_.begin() + ptrdiff_t(p.block));
    lasts_.erase(lasts_.begin() + ptrdiff_t(p.block));
  }

  // In key order; `for (const auto& [key, value] : blocks)` works.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Entry;
    using difference_type = ptrdiff_t;
    using pointer = const Entry*;
    using reference = const Entry&;
    const_iterator(const SortedBlocks* m, Pos p) : m_(m), p_(p) {}
    reference operator*() const { return m_->at(p_); }
    pointer operator->() const { return &m_->at(p_); }
    const_iterator& operator++() {
      p_ = m_->next(p_);
      return *this;
    }
    bool operator==(const const_iterator& o) const { return p_ == o.p_; }

   private:
    const SortedBlocks* m_;
    Pos p_;
  };
  const_iterator begin() const { return {this, begin_pos()}; }
  const_iterator end() const { return {this, end_pos()}; }

 private:
  // std::lower_bound without its branch: the keys searched are random, so the branch
  // mispredicted half the time and the search was a quarter of `report` (perf). The
  // halving step compiles to a conditional move. Precondition: n >= 1.
  template <class T, class Key>
  static size_t first_not_less(const T* a, size_t n, uint64_t k, Key key) {
    const T* base = a;
    while (n > 1) {
      const size_t half = n / 2;
      base = key(base[half]) < k ? base + half : base;
      n -= half;
    }
    return size_t(base - a) + (key(*base) < k ? 1 : 0);
  }

  static constexpr size_t kMaxBlock = 128;  // 2 KiB of entries: a split or a shift stays cheap

  std::vector<std::vector<Entry>> blocks_;
  std::vector<uint64_t> lasts_;  // lasts_[b] == blocks_[b].back().key: the first search stays in one array
  size_t size_ = 0;
};

}  // namespace cumemtrace
