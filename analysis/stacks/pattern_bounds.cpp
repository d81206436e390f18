#include "stacks/pattern_bounds.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace cumemtrace {
namespace {

// Sizes saturate here: a product of counts can pass 64 bits long before the pattern ends.
constexpr uint64_t kCap = uint64_t(1) << 40;
uint64_t sat_mul(uint64_t a, uint64_t b) { return b && a > kCap / b ? kCap : std::min(kCap, a * b); }

// The end of a bracket expression opened at p[i] == '[' (POSIX: a ']' first is literal,
// [:class:], [=e=] and [.c.] inside), or npos.
size_t bracket_end(std::string_view p, size_t i) {
  size_t j = i + 1;
  if (j < p.size() && p[j] == '^') ++j;
  if (j < p.size() && p[j] == ']') ++j;
  for (; j < p.size(); ++j) {
    if (p[j] == ']') return j;
    if (p[j] == '[' && j + 1 < p.size() && (p[j + 1] == ':' || p[j + 1] == '=' || p[j + 1] == '.')) {
      const char kind = p[j + 1];
      const size_t close = p.find(std::string{kind, ']'}, j + 2);
      if (close == std::string_view::npos) return std::string_view::npos;
      j = close + 1;
    }
  }
  return std::string_view::npos;
}

// A repetition count "{m}", "{m,}" or "{m,n}" at p[i] == '{': its largest copy count and
// its end, or false (then regcomp judges the brace).
bool count_at(std::string_view p, size_t i, uint64_t& copies, size_t& end) {
  uint64_t m = 0, n = 0;
  size_t j = i + 1;
  const auto number = [&](uint64_t& v) {
    const size_t from = j;
    for (; j < p.size() && p[j] >= '0' && p[j] <= '9'; ++j) v = std::min(kCap, v * 10 + uint64_t(p[j] - '0'));
    return j > from;
  };
  if (!number(m)) return false;
  bool open = false;
  if (j < p.size() && p[j] == ',') {
    ++j;
    open = !number(n);
  } else {
    n = m;
  }
  if (j >= p.size() || p[j] != '}') return false;
  copies = open ? m + 1 : std::max<uint64_t>({m, n, 1});
  end = j;
  return true;
}

}  // namespace

std::string pattern_out_of_bounds(std::string_view p) {
  if (p.size() > kPatternMaxBytes)
    return std::to_string(p.size()) + " bytes long, more than " + std::to_string(kPatternMaxBytes);
  // One entry per open group: its expanded size so far and that of its last atom.
  struct Group {
    uint64_t size = 0, last = 0;
  };
  std::vector<Group> open(1);
  const auto atom = [&](uint64_t size) {
    open.back().last = size;
    open.back().size = std::min(kCap, open.back().size + size);
  };
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      ++i;
      atom(1);
    } else if (c == '[') {
      const size_t end = bracket_end(p, i);
      if (end == std::string_view::npos) return {};  // regcomp says what is wrong
      i = end;
      atom(1);
    } else if (c == '(') {
      open.emplace_back();
      if (open.size() - 1 > kPatternMaxDepth)
        return "parentheses nested more than " + std::to_string(kPatternMaxDepth) + " deep";
    } else if (c == ')' && open.size() > 1) {
      const uint64_t size = std::max<uint64_t>(open.back().size, 1);
      open.pop_back();
      atom(size);
    } else if (c == '{') {
      uint64_t copies = 0;
      size_t end = 0;
      if (!count_at(p, i, copies, end)) {
        atom(1);
        continue;
      }
      Group& g = open.back();
      const uint64_t grown = sat_mul(g.last, copies);
      g.size = std::min(kCap, g.size - g.last + grown);
      g.last = grown;
      i = end;
    } else if (c == '|' || c == '*' || c == '+' || c == '?' || c == '^' || c == '$') {
      // An alternative adds to the sum; the others cost no copy of the atom (glibc's '+'
      // is one: a bound on the whole, not an exact count).
      if (c == '+') atom(open.back().last);
      if (c == '|') open.back().last = 0;
    } else {
      atom(1);
    }
  }
  uint64_t total = 0;
  for (const Group& g : open) total = std::min(kCap, total + g.size);
  if (total > kPatternMaxExpanded)
    return "its repetition counts expand it to " +
           std::string(total >= kCap ? "over a trillion" : std::to_string(total)) + " atoms, more than " +
           std::to_string(kPatternMaxExpanded);
  return {};
}

}  // namespace cumemtrace
