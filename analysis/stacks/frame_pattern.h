// A regular expression searched in a frame's text, shared by the rule sets over frames
// (allocator_frames.h, categories.h) so that both refuse and match alike.
//
// POSIX extended regular expressions, matched by glibc's automaton: its time grows with
// the name's length and the pattern's size, never exponentially as a backtracking
// matcher's does on a pattern like (a+)+$. Back-references, which would bring that back,
// are refused.
#pragma once

#include <regex.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace cumemtrace {

class FramePattern {
 public:
  // Throws std::invalid_argument naming the pattern and why it does not compile.
  explicit FramePattern(const std::string& text) {
    for (size_t i = 0; i + 1 < text.size(); ++i)
      if (text[i] == '\\' && text[i + 1] >= '1' && text[i + 1] <= '9')
        throw std::invalid_argument("'" + text + "': back-references are not supported");
    if (const int rc = regcomp(&re_, text.c_str(), REG_EXTENDED | REG_NOSUB)) {
      char why[256];
      regerror(rc, &re_, why, sizeof why);
      throw std::invalid_argument("'" + text + "': " + why);
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
