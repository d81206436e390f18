#include "cli/nearest_name.h"

#include <algorithm>

namespace cumemtrace {
namespace {

size_t edits(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string nearest_name(std::string_view word, const std::vector<std::string>& names) {
  std::string best;
  size_t best_edits = 3;
  for (const auto& n : names) {
    const size_t e = edits(word, n);
    if (e < best_edits && 2 * e < word.size()) {
      best = n;
      best_edits = e;
    }
  }
  if (!best.empty() || word.empty()) return best;
  for (const auto& n : names)
    if (n.starts_with(word) || word.starts_with(n)) return n;
  return "";
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& names) {
  const std::string near = nearest_name(word, names);
  return near.empty() ? "" : "; did you mean '" + near + "'?";
}

}  // namespace cumemtrace
