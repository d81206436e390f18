#include "reports/growth/iterations.h"

#include <algorithm>
#include <compare>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace cumemtrace {
namespace {

bool opens_range(format::MarkSource s) {
  return s == format::MarkSource::kNvtxPush || s == format::MarkSource::kNvtxStart || s == format::MarkSource::kTagPush;
}

struct Ranges {
  std::vector<std::pair<uint64_t, uint64_t>> complete;  // (start, end)
  bool unended = false;
  uint64_t length() const {
    uint64_t n = 0;
    for (const auto& [s, e] : complete) n += e - s;
    return n;
  }
};

// Each start with the first end at or after it and before the next start.
Ranges pair_ranges(std::vector<uint64_t> starts, std::vector<uint64_t> ends) {
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  Ranges r;
  size_t e = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    while (e < ends.size() && ends[e] < starts[i]) ++e;
    const bool before_next = e < ends.size() && (i + 1 == starts.size() || ends[e] < starts[i + 1]);
    if (before_next) r.complete.emplace_back(starts[i], ends[e++]);
    else r.unended = true;
  }
  return r;
}

uint64_t mix(uint64_t x) {  // splitmix64's finalizer: a stack's share of a signature
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

std::string_view iterations_by_name(IterationsBy by) {
  switch (by) {
    case IterationsBy::kRanges: return "nvtx-ranges";
    case IterationsBy::kMarks: return "marks";
    case IterationsBy::kCallSite: return "call-site";
    case IterationsBy::kNone: break;
  }
  return "none";
}

TimedIterations timed_iterations(const Trace& trace) {
  TimedIterations out;
  std::map<std::string, std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> ranges;  // starts, ends
  std::map<std::string, std::vector<uint64_t>> marks;
  for (const auto& m : trace.marks) {
    marks[m.name].push_back(m.time_ns);
    if (opens_range(m.source)) ranges[m.name].first.push_back(m.time_ns);
  }
  for (const auto& e : trace.range_ends)
    if (auto it = ranges.find(e.name); it != ranges.end()) it->second.second.push_back(e.time_ns);
  Ranges best;
  for (const auto& [name, se] : ranges) {
    Ranges r = pair_ranges(se.first, se.second);
    if (r.complete.size() < 2) continue;
    if (std::pair(r.complete.size(), r.length()) > std::pair(best.complete.size(), best.length()))
      best = std::move(r), out.name = name;
  }
  if (!best.complete.empty()) {
    out.by = IterationsBy::kRanges;
    out.boundaries.push_back(best.complete.front().first);
    for (const auto& [s, e] : best.complete) out.boundaries.push_back(e);
    out.partial_left_out = best.unended;
    return out;
  }
  size_t most = 1;
  for (const auto& [name, times] : marks)
    if (times.size() > most) most = times.size(), out.name = name;
  if (out.name.empty()) return out;
  out.by = IterationsBy::kMarks;
  out.boundaries = marks[out.name];
  std::sort(out.boundaries.begin(), out.boundaries.end());
  return out;
}

void StretchSignature::add(uint32_t stack, uint32_t python) {
  hash += mix((uint64_t(stack) << 32) | python);
  ++allocations;
}

bool last_stretch_whole(const std::vector<StretchSignature>& iterations, const StretchSignature& last, bool clean_end) {
  // Judged by what it does, not how long it lasts: exit work (evaluation, saving) can take
  // longer than an iteration and allocate nothing like one.
  // An empty stretch is one only where an iteration allocated nothing too.
  return clean_end && std::find(iterations.begin(), iterations.end(), last) != iterations.end();
}

FoundLoop find_loop(const std::deque<AllocStep>& allocs, uint32_t frees_total) {
  const size_t n = allocs.size();
  std::vector<uint64_t> hash(n + 1, 0);  // hash[i]: the allocations before position i, as a multiset
  for (size_t i = 0; i < n; ++i) hash[i + 1] = hash[i] + mix((uint64_t(allocs[i].stack) << 32) | allocs[i].python);
  const auto frees = [&](size_t i) -> uint64_t { return i < n ? allocs[i].frees_before : frees_total; };
  std::unordered_map<uint64_t, std::vector<size_t>> at;
  for (size_t i = 0; i < n; ++i) at[(uint64_t(allocs[i].stack) << 32) | allocs[i].python].push_back(i);

  FoundLoop best;
  uint64_t best_cover = 0;
  size_t best_first = 0, best_len = 0;
  uint64_t best_hash = 0, best_frees = 0;
  // Signature of each stretch: (allocations' hash, frees, length); the most common one,
  // the least signature among as common ones. Sorted in one reused vector and counted in
  // runs: a tree of counts per stack allocated a node per stretch, and on a trace of random
  // order nearly every stretch is a signature of its own (docs/performance.md, "Where
  // `report`'s time goes"). Frees and lengths fit 32 bits: both count allocation steps.
  struct Signature {
    uint64_t hash;
    uint32_t frees, length;
    auto operator<=>(const Signature&) const = default;
  };
  std::vector<Signature> stretches;
  for (const auto& [key, pos] : at) {
    if (pos.size() < 3) continue;
    stretches.clear();
    stretches.reserve(pos.size() - 1);
    for (size_t j = 0; j + 1 < pos.size(); ++j)
      stretches.push_back({hash[pos[j + 1]] - hash[pos[j]], uint32_t(frees(pos[j + 1]) - frees(pos[j])),
                           uint32_t(pos[j + 1] - pos[j])});
    std::sort(stretches.begin(), stretches.end());
    Signature mode{};
    uint64_t agree = 0;
    for (size_t j = 0, run = 0; j < stretches.size(); j += run) {
      for (run = 1; j + run < stretches.size() && stretches[j + run] == stretches[j];) ++run;
      if (run > agree) agree = run, mode = stretches[j];
    }
    const uint64_t h = mode.hash, f = mode.frees;
    const size_t len = mode.length;
    const uint64_t cover = agree * len;
    if (agree < 2 || f == 0 || 2 * cover < pos.back() - pos.front()) continue;
    if (cover < best_cover || (cover == best_cover && pos.front() > best_first)) continue;
    best = FoundLoop{true, allocs[pos[0]].stack, allocs[pos[0]].python, pos, false, pos.size() - 1, agree};
    best_cover = cover, best_first = pos.front(), best_len = len, best_hash = h, best_frees = f;
  }
  if (best.found) {
    const size_t last = best.starts.back();
    best.last_whole = last + best_len <= n && hash[last + best_len] - hash[last] == best_hash &&
                      frees(last + best_len) - frees(last) >= best_frees;
  }
  return best;
}

}  // namespace cumemtrace
