#include "stacks/call_site_rule.h"
#include "base/text.h"

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

bool is_libc_startup(const Frame& f) {
  if (f.python) return false;
  // Without the symbol's version: elfutils names it "__libc_start_main@@GLIBC_2.34".
  const std::string_view fn = std::string_view(f.function).substr(0, f.function.find('@'));
  return fn == "_start" || fn == "__libc_start_main" || fn == "__libc_start_main_impl" ||
         fn == "__libc_start_call_main";
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

UserSite UserSites::of(uint32_t stack_id, uint32_t python_stack_id) const {
  UserSite s;
  s.node = native(stack_id);
  if (call_site_rule() == CallSiteRule::kUser && python_stack_id) {
    auto it = python_.find(python_stack_id);
    if (it == python_.end()) {
      std::pair<int, uint64_t> found{-1, 0};
      const auto fs = python_frames(stacks_.trace(), python_stack_id);
      for (size_t i = 0; i < fs.size(); ++i)
        if (is_user_python(fs[i])) {
          const std::hash<std::string> h;
          found = {int(i), h(fs[i].file) * 31 + h(fs[i].function) * 7 + fs[i].line};
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

std::string user_frame_text(const std::vector<Frame>& native, const std::vector<Frame>& python) {
  if (call_site_rule() == CallSiteRule::kUser)
    for (const Frame& f : python)
      if (is_user_python(f)) return f.file + ":" + (f.line ? std::to_string(f.line) : "?") + " in " + f.function;
  if (native.empty() || native[0].function.empty()) return "";
  return elide_templates(native[0].function);
}

std::vector<Frame> user_python_frames(const Trace& trace, const UserSite& site, uint32_t python_stack_id) {
  if (!site.from_python || site.python < 0) return {};
  std::vector<Frame> py = python_frames(trace, python_stack_id);
  if (size_t(site.python) > py.size()) return {};
  py.erase(py.begin(), py.begin() + site.python);
  return py;
}

}  // namespace cumemtrace
