// What a call site is, in the user's terms (docs/cli.md): one rule, written once, that
// every table of call sites follows (stacks.h: Stacks::user_site).
//
// `user` (the default): the innermost frame that is the user's —
//   1. a Python frame whose file is outside the standard library (…/lib/pythonX.Y/ without
//      site-packages, "<frozen …>", "<string>") and outside site-packages/dist-packages,
//      unless it is under one of the user's own packages (--user-package NAME: a directory
//      site-packages/NAME/), and outside cumemtrace's own Python package;
//   2. else the innermost native frame outside the tracer and CUDA, outside allocators
//      (allocator_frames.h) and outside framework dispatch and the interpreter: by module
//      libtorch*, libc10*, torch's _C and other CPython extensions of site-packages, libpython*,
//      python3*, libffi*, _ctypes*; by function name at::, c10::, torch::, pybind11::,
//      THPVariable_, wrapper_<backend>__ (PyTorch's registered kernels), _Py*, Py*;
//   3. else the frame the `native` rule below gives.
// `native`: rule 2 alone, Python frames left aside; when every native frame is excluded,
//   the first frame outside the tracer, CUDA and allocators.
// `innermost`: the first frame outside the tracer and CUDA, nothing else skipped (also what
//   --no-allocator-skip gives, whatever the rule); that frame alone is the site, whoever
//   called it.
//
// Under `user` and `native` a site is the user's part of the stack, not one frame: the
// chosen frame and its callers that are the user's too (Python frames by 1., native ones not is_foreign_native). Sites
// that share the chosen frame (a program's own allocation helper) but not those callers are
// different sites, named by the frame and the nearest caller that tells them apart
// (CallerNames; docs/cli.md, "Call sites in the user's terms").
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "stacks/stacks.h"

namespace cumemtrace {

enum class CallSiteRule { kUser, kNative, kInnermost };

// For this run of the command line (replacing what an earlier call set).
void set_call_site_rule(CallSiteRule rule, std::vector<std::string> user_packages);
CallSiteRule call_site_rule();
// "user", "native", "innermost"; false for anything else.
bool parse_call_site_rule(std::string_view text, CallSiteRule& out);

bool is_user_python(const Frame& f);
// A native frame of framework dispatch or of the interpreter (not of an allocator).
bool is_dispatch_or_interpreter(const Frame& f);
// libc's start-up frames, outermost on the main thread's every stack: `_start`,
// `__libc_start_main` (`__libc_start_main_impl` in the symbol tables of glibc 2.34 on),
// `__libc_start_call_main`, with or without a symbol version ("@@GLIBC_2.34"). Text stacks
// leave them out (docs/cli.md, "report").
bool is_libc_startup(const Frame& f);
// How many of a native stack's outermost frames (innermost first) are libc's start-up: those
// above, and an outermost frame with no name outside `__libc_start_main`, which only `_start`
// calls (a stripped program's `_start`: `prog+0x26d1`), and a frame with no name in libc right
// inside `__libc_start_main` (`__libc_start_call_main` where libc has no symbol table, as
// Ubuntu 24.04's). Text stacks and trees leave them out.
size_t libc_startup_frames(const std::vector<Frame>& native);
// A native frame no user acts on: CUDA's or the tracer's, an allocator's, framework
// dispatch's or the interpreter's, libc's start-up. The page's flame graph folds these,
// `--by function` leaves them out.
bool is_foreign_native(const Frame& f);

// The call site of one allocation under the rule.
struct UserSite {
  uint32_t node = 0;         // native StackNode to show frames from (the chosen native frame, or
                             // the call site stacks.h gives when the rule chose a Python frame)
  int python = -1;           // index in python_frames(trace, python stack) of the user's frame; -1: none
  uint64_t key = 0;          // one per user part of the stack: the chosen frame (a Python (file, function,
                             // line) or a native call instruction) and the user's callers of it
  bool from_python = false;  // the key names a Python frame
};

// The user's callers kept per site, nearest first: deeper ones never tell sites apart in
// practice, and recursion would make every depth a site.
inline constexpr size_t kMaxUserCallers = 32;

// The rule applied to stacks, with what it found per stack cached.
class UserSites {
 public:
  explicit UserSites(const Stacks& stacks) : stacks_(stacks) {}
  UserSite of(uint32_t stack_id, uint32_t python_stack_id) const;
  // The user's part of the stack: the chosen frame, then the user's callers of it, nearest
  // first (at most kMaxUserCallers); empty when no frame was chosen.
  std::vector<Frame> user_part(uint32_t stack_id, uint32_t python_stack_id) const;

 private:
  uint32_t native(uint32_t stack_id) const;
  UserSite chosen(uint32_t stack_id, uint32_t python_stack_id) const;
  std::vector<Frame> callers(const UserSite& s, uint32_t python_stack_id) const;
  const Stacks& stacks_;
  mutable std::unordered_map<uint32_t, uint32_t> native_;                  // stack -> the chosen native node
  mutable std::unordered_map<uint32_t, std::pair<int, uint64_t>> python_;  // python stack -> (index, key)
  mutable std::map<std::pair<uint32_t, uint32_t>, UserSite> sites_;        // (stack, python stack) -> site
};

// A frame as keys hold it, the same in every run and checkout (stacks.h: describe's kName,
// source_key): "FILE:FUNCTION:LINE" for a Python frame, "FUNCTION FILE:LINE" (or the kName
// alone, without a source line) for a native one.
std::string frame_key(const Frame& f);

// How sites that share their chosen frame are told apart: by the nearest of the user's
// callers at which no other such site's callers agree with its own. Fed every site of the
// trace(s) named together, so that a site is named alike in every table.
class CallerNames {
 public:
  struct Names {
    std::string text;  // " ← keep_history", " ← … ← main" (callers between skipped); "" when none is needed
    std::string key;   // the same as keys hold frames: " <- keep_history train.cpp:20"
  };
  CallerNames() = default;
  // Fed the sites of every (stack, Python stack) in `sites`; `users` must outlive it.
  CallerNames(const UserSites& users, const std::set<std::pair<uint32_t, uint32_t>>& sites);
  // `part`: UserSites::user_part.
  void add(const std::vector<Frame>& part);
  Names of(const std::vector<Frame>& part) const;
  // A site by its stacks, or by its UserSite::key among those it was fed (the constructor's).
  Names of(uint32_t stack_id, uint32_t python_stack_id) const;
  Names of_key(uint64_t key) const;

 private:
  const UserSites* users_ = nullptr;
  std::map<std::string, std::set<std::vector<std::string>>> groups_;  // chosen frame's key -> callers' keys
  std::unordered_map<uint64_t, Names> by_key_;
  std::map<std::string, std::string> texts_;  // a caller's key -> its name
};

// A site's Python frames, from the user's frame the rule chose outwards (python_stacks.h's
// order); none when it chose a native frame.
std::vector<Frame> user_python_frames(const Trace& trace, const UserSite& site, uint32_t python_stack_id);

// The Python frame the rule names a site by: the innermost of the user's under `user`;
// null under the other rules or when none is the user's (then the first native frame).
const Frame* user_python_frame(const std::vector<Frame>& python);

// A C++ name with the template arguments elided ("std::vector<int>::push_back" →
// "std::vector<…>::push_back"), for text; operator<, operator<<, operator<=> stay whole.
std::string elide_templates(std::string_view name);

// A call site in one line of text, as every verdict names it: the user's Python frame under
// the rule ("/home/u/train.py:12 in step"), else the first native frame's function with its
// template arguments elided; "" when neither is named. `native` from the call site outward
// (SiteRow::frames), `python` innermost first (the whole Python stack, or from the user's
// frame, as GrowthSite keeps it). `caller` (CallerNames::Names::text) follows the frame.
std::string user_frame_text(const std::vector<Frame>& native, const std::vector<Frame>& python,
                            std::string_view caller = {});

}  // namespace cumemtrace
