// What an allocation is for, in the terms a large-model user reads first (docs/categories.md):
// weights, gradients, optimizer state, activations, NCCL buffers, library workspaces...
// A first-match rule table over the frames of the allocation's merged stack (native and
// Python, python_stacks.h), as Meta's Mosaic has over PyTorch snapshots, but applied to
// every allocation of every library. docs/categories.md lists the default table.
//
// A frame's text is "WHERE:FUNCTION": WHERE is a Python frame's file as the code object
// has it ("/usr/lib/python3/dist-packages/torch/optim/adam.py:_single_tensor_adam") or a
// native frame's module basename ("libnccl.so.2:ncclMemAlloc"); FUNCTION is empty when the
// frame is not symbolized. Rules are tried in order, the user's before the defaults; a
// rule matches when its regex is found in the text of any frame, frames searched from the
// innermost outward; the first rule that matches names the category. Whole-table order,
// not frame order, decides: a user's rule over an outer frame (the user's build_model)
// beats a default over an inner one (module.py's _apply).
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "stacks/frame_pattern.h"
#include "stacks/stacks.h"

namespace cumemtrace {

// Changes whenever a default rule or category is added, removed, reordered or renamed, so
// that figures of two reports are compared only under one table (JSON: rules_version).
inline constexpr std::string_view kCategoryRulesVersion = "cumemtrace-categories-1";

// Categories no rule gives: memory in no allocation, and what matched nothing.
namespace category {
inline constexpr std::string_view kContexts = "contexts";
inline constexpr std::string_view kPoolSlack = "pool_slack";
inline constexpr std::string_view kGraphMemoryPool = "graph_memory_pool";
inline constexpr std::string_view kUntracked = "untracked";
inline constexpr std::string_view kOther = "other";
}  // namespace category

struct CategoryRule {
  std::string category;
  std::string regex;
  size_t line = 0;  // in the user's file; 0 for a default rule
  std::shared_ptr<const FramePattern> pattern;
};

// A user rules file that cannot be read: the message names the line ("line 3: ...").
struct CategoryRulesError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class CategoryRules {
 public:
  CategoryRules();  // the default table alone

  // Lines "CATEGORY<spaces or tab>REGEX"; blank lines and lines whose first non-blank is
  // '#' are skipped. CATEGORY is one word ([A-Za-z0-9_.-]); REGEX is the rest of the line,
  // trailing blanks trimmed. The rules go before the defaults (and before rules added
  // earlier by this call's predecessors: none, one file per run). Throws CategoryRulesError.
  void add_user_rules(std::string_view text);

  const std::vector<CategoryRule>& rules() const { return rules_; }
  size_t user_rules() const { return user_; }

  // The index in rules() of the first rule matching `frames` (innermost first); -1: none.
  int match(const std::vector<Frame>& frames) const;
  // ... matching one frame's text. match() is the least of these over the frames, so a
  // caller that sees the same frames in many stacks can keep them per frame.
  int first_rule(std::string_view frame_text) const;

 private:
  std::vector<CategoryRule> rules_;
  size_t user_ = 0;
};

// "WHERE:FUNCTION", as the rules see a frame.
std::string frame_text(const Frame& f);

}  // namespace cumemtrace
