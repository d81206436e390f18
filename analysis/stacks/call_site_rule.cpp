#include "stacks/call_site_rule.h"
#include "base/text.h"

#include <algorithm>
#include <functional>

#include "stacks/allocator_frames.h"
#include "stacks/python_stacks.h"

namespace cumemtrace {
namespace {

struct CallSiteSettings {
  CallSiteRule rule = CallSiteRule::kUser;
  std::vector<std::string> packages;  // "site-packages/NAME/" and "dist-packages/NAME/"
};

CallSiteSettings& call_site_settings() {
  static CallSiteSettings s;
  return s;
}

bool starts(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }

uint64_t python_key(const Frame& f) {
  const std::hash<std::string> h;
  return h(f.file) * 31 + h(f.function) * 7 + f.line;
}

// A standard library file: …/lib/python3.11/x.py (not below its site-packages), a frozen
// module, code compiled from a string.
bool is_stdlib(std::string_view file) {
  if (starts(file, "<frozen") || file == "<string>") return true;
  const auto at = file.find("/lib/python");
  if (at == std::string_view::npos) return false;
  return !has(file.substr(at), "-packages/");
}

}  // namespace

void set_call_site_rule(CallSiteRule rule, std::vector<std::string> user_packages) {
  CallSiteSettings& s = call_site_settings();
  s.rule = rule;
  s.packages.clear();
  for (const auto& p : user_packages) {
    s.packages.push_back("site-packages/" + p + "/");
    s.packages.push_back("dist-packages/" + p + "/");
  }
}

CallSiteRule call_site_rule() { return call_site_settings().rule; }

bool parse_call_site_rule(std::string_view text, CallSiteRule& out) {
  if (text == "user") out = CallSiteRule::kUser;
  else if (text == "native") out = CallSiteRule::kNative;
  else if (text == "innermost") out = CallSiteRule::kInnermost;
  else return false;
  return true;
}

bool is_user_python(const Frame& f) {
  if (!f.python) return false;
  const std::string_view file = f.file;
  for (const auto& p : call_site_settings().packages)
    if (has(file, p)) return true;
  if (is_stdlib(file) || has(file, "site-packages/") || has(file, "dist-packages/")) return false;
  return !has(file, "/cumemtrace/_api.py") && !has(file, "/cumemtrace/torch.py") &&
         !has(file, "/cumemtrace/pytest_plugin.py") && !has(file, "/cumemtrace/__init__.py");
}

namespace {
// A native frame's function without the symbol's version: elfutils names it
// "__libc_start_main@@GLIBC_2.34".
std::string_view unversioned(const Frame& f) { return std::string_view(f.function).substr(0, f.function.find('@')); }

bool is_start_main(const Frame& f) {
  const std::string_view fn = unversioned(f);
  return !f.python && (fn == "__libc_start_main" || fn == "__libc_start_main_impl");
}
}  // namespace

bool is_libc_startup(const Frame& f) {
  if (f.python) return false;
  const std::string_view fn = unversioned(f);
  return fn == "_start" || is_start_main(f) || fn == "__libc_start_call_main";
}

size_t libc_startup_frames(const std::vector<Frame>& native) {
  const size_t n = native.size();
  size_t k = n >= 2 && !native[n - 1].python && native[n - 1].function.empty() && is_start_main(native[n - 2]) ? 1 : 0;
  while (k < n && is_libc_startup(native[n - 1 - k])) ++k;
  // glibc 2.34 on calls main through __libc_start_call_main, a static function: where libc has
  // no symbol table (Ubuntu 24.04's), that frame is unnamed, in libc, right inside
  // __libc_start_main.
  if (k && k < n && is_start_main(native[n - k])) {
    const Frame& f = native[n - 1 - k];
    if (!f.python && f.function.empty() && starts(f.module, "libc.so")) ++k;
  }
  return k;
}

bool is_foreign_native(const Frame& f) {
  if (f.python) return false;
  return is_cuda_or_tracer_module(f.module) || is_dispatch_or_interpreter(f) || is_libc_startup(f) ||
         (!f.function.empty() && is_allocator_frame(f.function));
}

bool is_dispatch_or_interpreter(const Frame& f) {
  if (f.python) return false;
  const std::string_view m = f.module, fn = f.function;
  if (starts(m, "libtorch") || starts(m, "libc10") || starts(m, "libpython") || starts(m, "python3") ||
      starts(m, "libffi") || starts(m, "_ctypes") || (starts(m, "_C.") && has(m, ".so")))
    return true;
  if (starts(fn, "at::") || starts(fn, "c10::") || starts(fn, "torch::") || starts(fn, "pybind11::") ||
      starts(fn, "THPVariable_") || starts(fn, "_Py") || starts(fn, "Py") || starts(fn, "ffi_call"))
    return true;
  // PyTorch's registered kernels: at::(anonymous namespace)::wrapper_CUDA__empty_strided(...)
  return has(fn, "::wrapper_") || starts(fn, "wrapper_");
}

uint32_t UserSites::native(uint32_t stack_id) const {
  if (auto it = native_.find(stack_id); it != native_.end()) return it->second;
  const CallSite cs = stacks_.call_site(stack_id);
  uint32_t chosen = cs.node;
  // --no-allocator-skip asks for the allocator's own frames: the innermost rule's site.
  if (call_site_rule() == CallSiteRule::kInnermost || !allocator_skip()) {
    chosen = cs.owner;
  } else {
    // From the call site (already past the tracer, CUDA and allocator frames) outwards.
    const auto& nodes = stacks_.trace().stack_nodes;
    size_t steps = 0;
    for (uint32_t id = cs.node; id != 0 && steps++ < nodes.size();) {
      auto it = nodes.find(id);
      if (it == nodes.end()) break;
      const std::vector<Frame> f = stacks_.frames(id, 1);
      if (!f.empty() && !is_allocator_frame(f[0].function) && !is_dispatch_or_interpreter(f[0])) {
        chosen = id;
        break;
      }
      id = it->second.parent;
    }
  }
  native_.emplace(stack_id, chosen);
  return chosen;
}

UserSite UserSites::chosen(uint32_t stack_id, uint32_t python_stack_id) const {
  UserSite s;
  s.node = native(stack_id);
  if (call_site_rule() == CallSiteRule::kUser && python_stack_id) {
    auto it = python_.find(python_stack_id);
    if (it == python_.end()) {
      std::pair<int, uint64_t> found{-1, 0};
      const auto fs = python_frames(stacks_.trace(), python_stack_id);
      for (size_t i = 0; i < fs.size(); ++i)
        if (is_user_python(fs[i])) {
          found = {int(i), python_key(fs[i])};
          break;
        }
      it = python_.emplace(python_stack_id, found).first;
    }
    if (it->second.first >= 0) {
      s.python = it->second.first, s.key = it->second.second, s.from_python = true;
      s.node = stacks_.call_site(stack_id).node;  // the Python frame names the site (see UserSite::node)
      return s;
    }
  }
  const auto ips = stacks_.ips(s.node);
  s.key = ips.empty() ? 0 : ips.front();
  return s;
}

UserSite UserSites::of(uint32_t stack_id, uint32_t python_stack_id) const {
  const std::pair memo(stack_id, python_stack_id);
  if (auto it = sites_.find(memo); it != sites_.end()) return it->second;
  UserSite s = chosen(stack_id, python_stack_id);
  // The callers are part of the site: a helper called from three places is three sites.
  for (const Frame& f : callers(s, python_stack_id))
    s.key = (s.key ^ (f.python ? python_key(f) : f.ip)) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
  sites_.emplace(memo, s);
  return s;
}

std::vector<Frame> UserSites::callers(const UserSite& s, uint32_t python_stack_id) const {
  std::vector<Frame> out;
  // Asked for the innermost frame itself (the allocator's, say): that frame alone is the site.
  if (call_site_rule() == CallSiteRule::kInnermost || !allocator_skip()) return out;
  if (s.from_python) {
    const auto py = python_frames(stacks_.trace(), python_stack_id);
    for (size_t i = size_t(s.python) + 1; i < py.size() && out.size() < kMaxUserCallers; ++i)
      if (is_user_python(py[i])) out.push_back(py[i]);
    return out;
  }
  if (!s.node) return out;
  std::vector<Frame> fs = stacks_.frames(s.node, SIZE_MAX);  // one walk to the root
  for (size_t i = 1; i < fs.size() && out.size() < kMaxUserCallers; ++i)
    if (!is_foreign_native(fs[i])) out.push_back(std::move(fs[i]));
  return out;
}

std::vector<Frame> UserSites::user_part(uint32_t stack_id, uint32_t python_stack_id) const {
  const UserSite s = of(stack_id, python_stack_id);
  std::vector<Frame> part;
  if (s.from_python) {
    const auto py = python_frames(stacks_.trace(), python_stack_id);
    if (size_t(s.python) < py.size()) part.push_back(py[size_t(s.python)]);
  } else if (s.node) {
    part = stacks_.frames(s.node, 1);
  }
  if (part.empty()) return part;
  const auto more = callers(s, python_stack_id);
  part.insert(part.end(), more.begin(), more.end());
  return part;
}

std::string frame_key(const Frame& f) {
  if (f.python) return source_key(f.file) + ":" + f.function + ":" + std::to_string(f.line);
  if (f.function.empty()) return describe(f, FrameStyle::kName);
  return f.file.empty() ? f.function : f.function + " " + source_key(f.file) + ":" + std::to_string(f.line);
}

namespace {

std::vector<std::string> caller_keys(const std::vector<Frame>& part) {
  std::vector<std::string> keys;
  for (size_t i = 1; i < part.size(); ++i) keys.push_back(frame_key(part[i]));
  return keys;
}

// A caller as a person names it: its function ("keep_history"), else its file and line.
std::string caller_text(const Frame& f) { return describe(f, FrameStyle::kCaller); }

// The same with its line, where another site's caller has the same name: "train.py:44 in
// test_leaks", "keep_history at train.cpp:25".
std::string caller_where(const Frame& f) { return describe(f, FrameStyle::kCallerAt); }

}  // namespace

CallerNames::CallerNames(const UserSites& users, const std::set<std::pair<uint32_t, uint32_t>>& sites)
    : users_(&users) {
  for (const auto& [stack, python] : sites) add(users.user_part(stack, python));
  for (const auto& [stack, python] : sites) by_key_.emplace(users.of(stack, python).key, of(stack, python));
}

CallerNames::Names CallerNames::of(uint32_t stack_id, uint32_t python_stack_id) const {
  return users_ ? of(users_->user_part(stack_id, python_stack_id)) : Names{};
}

CallerNames::Names CallerNames::of_key(uint64_t key) const {
  const auto it = by_key_.find(key);
  return it == by_key_.end() ? Names{} : it->second;
}

void CallerNames::add(const std::vector<Frame>& part) {
  if (part.empty()) return;
  groups_[frame_key(part[0])].insert(caller_keys(part));
  for (size_t i = 1; i < part.size(); ++i) texts_.emplace(frame_key(part[i]), caller_text(part[i]));
}

CallerNames::Names CallerNames::of(const std::vector<Frame>& part) const {
  if (part.size() < 2) return {};  // no caller of the user's: the frame alone names it
  const auto g = groups_.find(frame_key(part[0]));
  if (g == groups_.end() || g->second.size() < 2) return {};
  const std::vector<std::string> mine = caller_keys(part);
  // The nearest depth at which no other site's callers agree with these up to there; the
  // whole chain when another site's callers extend it.
  size_t depth = mine.size() - 1;
  for (size_t d = 0; d < mine.size(); ++d) {
    const bool shared = std::any_of(g->second.begin(), g->second.end(), [&](const std::vector<std::string>& other) {
      return other != mine && other.size() > d &&
             std::equal(mine.begin(), mine.begin() + ptrdiff_t(d) + 1, other.begin());
    });
    if (!shared) {
      depth = d;
      break;
    }
  }
  // Two callers of one name (two lines of one function) are told apart by their lines.
  const std::string text = caller_text(part[depth + 1]);
  const bool same_name = std::any_of(g->second.begin(), g->second.end(), [&](const std::vector<std::string>& other) {
    if (other.size() <= depth || other[depth] == mine[depth]) return false;
    const auto t = texts_.find(other[depth]);
    return t != texts_.end() && t->second == text;
  });
  Names n;
  if (depth > 0) n.text = " ← …", n.key = " <- …";
  n.text += " ← " + (same_name ? caller_where(part[depth + 1]) : text);
  n.key += " <- " + mine[depth];
  return n;
}

std::string elide_templates(std::string_view name) {
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    // operator<, operator<<, operator<=>, operator< <…>: the operator's own '<' is no bracket.
    if (depth == 0 && name.substr(0, i).ends_with("operator")) {
      size_t j = i;
      while (j < name.size() && (name[j] == '<' || name[j] == '=' || name[j] == '>')) ++j;
      if (j > i) {
        out.append(name.substr(i, j - i));
        i = j - 1;
        continue;
      }
    }
    if (c == '<') {
      if (depth++ == 0) out += "<…";
    } else if (c == '>' && depth > 0) {
      if (--depth == 0) out += '>';
    } else if (depth == 0) {
      out += c;
    }
  }
  return depth == 0 ? out : std::string(name);  // unbalanced: not a template, keep it whole
}

std::string user_frame_text(const std::vector<Frame>& native, const std::vector<Frame>& python,
                            std::string_view caller) {
  if (const Frame* f = user_python_frame(python)) return describe(*f, FrameStyle::kReport) + std::string(caller);
  if (native.empty() || native[0].function.empty()) return "";
  return elide_templates(native[0].function) + std::string(caller);
}

const Frame* user_python_frame(const std::vector<Frame>& python) {
  if (call_site_rule() != CallSiteRule::kUser) return nullptr;
  for (const Frame& f : python)
    if (is_user_python(f)) return &f;
  return nullptr;
}

std::vector<Frame> user_python_frames(const Trace& trace, const UserSite& site, uint32_t python_stack_id) {
  if (!site.from_python || site.python < 0) return {};
  std::vector<Frame> py = python_frames(trace, python_stack_id);
  if (size_t(site.python) > py.size()) return {};
  py.erase(py.begin(), py.begin() + site.python);
  return py;
}

}  // namespace cumemtrace
