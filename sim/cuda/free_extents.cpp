#include "free_extents.h"

namespace sim {

void FreeExtents::update(int32_t n) {
    Node &node = nodes_[n];
    node.longest = node.length;
    if (longest(node.left) > node.longest) node.longest = longest(node.left);
    if (longest(node.right) > node.longest) node.longest = longest(node.right);
}

void FreeExtents::split(int32_t n, uint64_t key, int32_t &below, int32_t &rest) {
    if (n < 0) {
        below = rest = -1;
        return;
    }
    if (nodes_[n].start < key) {
        split(nodes_[n].right, key, nodes_[n].right, rest);
        below = n;
    } else {
        split(nodes_[n].left, key, below, nodes_[n].left);
        rest = n;
    }
    update(n);
}

int32_t FreeExtents::merge(int32_t a, int32_t b) {
    if (a < 0) return b;
    if (b < 0) return a;
    if (nodes_[a].priority > nodes_[b].priority) {
        nodes_[a].right = merge(nodes_[a].right, b);
        update(a);
        return a;
    }
    nodes_[b].left = merge(a, nodes_[b].left);
    update(b);
    return b;
}

void FreeExtents::insert(uint64_t start, uint64_t length) {
    // xorshift64: cheap, and deterministic (see the header).
    seed_ ^= seed_ << 13;
    seed_ ^= seed_ >> 7;
    seed_ ^= seed_ << 17;
    Node node{start, length, length, seed_, -1, -1};
    int32_t n;
    if (!unused_.empty()) {
        n = unused_.back();
        unused_.pop_back();
        nodes_[n] = node;
    } else {
        n = int32_t(nodes_.size());
        nodes_.push_back(node);
    }
    int32_t below, rest;
    split(root_, start, below, rest);
    root_ = merge(merge(below, n), rest);
}

bool FreeExtents::erase(uint64_t start) {
    int32_t below, rest, match, above;
    split(root_, start, below, rest);
    // Starts are distinct, so the range starting at `start` is the lowest of
    // `rest`; splitting at start + 1 isolates it.
    split(rest, start + 1, match, above);
    root_ = merge(below, above);
    if (match < 0) return false;
    unused_.push_back(match);
    return true;
}

std::optional<Extent> FreeExtents::first_fit_in(int32_t n, uint64_t length, uint64_t from) const {
    // Without a lower bound this is one descent. With one, subtrees wholly
    // below `from` are skipped by the start comparison, so it stays O(log n).
    while (n >= 0 && longest(n) >= length) {
        const Node &node = nodes_[n];
        if (node.start >= from) {
            if (longest(node.left) >= length)
                if (auto hit = first_fit_in(node.left, length, from)) return hit;
            if (node.length >= length) return Extent{node.start, node.length};
        }
        n = node.right;
    }
    return std::nullopt;
}

std::optional<Extent> FreeExtents::first_fit(uint64_t length, uint64_t from) const {
    return first_fit_in(root_, length, from);
}

std::optional<Extent> FreeExtents::at_or_before(uint64_t addr) const {
    std::optional<Extent> best;
    for (int32_t n = root_; n >= 0;) {
        const Node &node = nodes_[n];
        if (node.start <= addr) {
            best = Extent{node.start, node.length};
            n = node.right;
        } else {
            n = node.left;
        }
    }
    return best;
}

std::optional<Extent> FreeExtents::at_or_after(uint64_t addr) const {
    std::optional<Extent> best;
    for (int32_t n = root_; n >= 0;) {
        const Node &node = nodes_[n];
        if (node.start >= addr) {
            best = Extent{node.start, node.length};
            n = node.left;
        } else {
            n = node.right;
        }
    }
    return best;
}

void FreeExtents::clear() {
    nodes_.clear();
    unused_.clear();
    root_ = -1;
}

}  // namespace sim
