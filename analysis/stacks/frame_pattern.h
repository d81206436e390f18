// A regular expression searched in a frame's text, shared by the rule sets over frames
// (allocator_frames.h, categories.h) so that both refuse and match alike.
//
// POSIX extended regular expressions, matched by glibc's automaton: its time grows with
// the name's length and the pattern's size, never exponentially as a backtracking
// matcher's does on a pattern like (a+)+$. Back-references, which would bring that back,
// are refused, and so is a pattern past the bounds of pattern_bounds.h.
#pragma once

#include <regex.h>

#include <stdexcept>
#include <string>
#include <string_view>

#include "base/escape.h"
#include "stacks/pattern_bounds.h"

namespace cumemtrace {

class FramePattern {
 public:
  // Throws std::invalid_argument naming the pattern and why it does not compile.
  explicit FramePattern(const std::string& text) {
    // The pattern as the message quotes it: printable, and its head alone when long.
    const auto quoted = [&] {
      return "'" + printable(std::string_view(text).substr(0, 64)) + (text.size() > 64 ? "'…" : "'");
    };
    for (size_t i = 0; i + 1 < text.size(); ++i)
      if (text[i] == '\\' && text[i + 1] >= '1' && text[i + 1] <= '9')
        throw std::invalid_argument(quoted() + ": back-references are not supported");
    if (const std::string why = pattern_out_of_bounds(text); !why.empty())
      throw std::invalid_argument(quoted() + ": " + why);
    if (const int rc = regcomp(&re_, text.c_str(), REG_EXTENDED | REG_NOSUB)) {
      char why[256];
      regerror(rc, &re_, why, sizeof why);
      throw std::invalid_argument(quoted() + ": " + why);
    }
  }
  ~FramePattern() { regfree(&re_); }
  FramePattern(const FramePattern&) = delete;
  FramePattern& operator=(const FramePattern&) = delete;
  bool search(std::string_view s) const {
    regmatch_t range{0, regoff_t(s.size())};  // REG_STARTEND: the view needs no NUL
    return regexec(&re_, s.data(), 1, &range, REG_STARTEND) == 0;
  }

 private:
  regex_t re_{};
};

}  // namespace cumemtrace
