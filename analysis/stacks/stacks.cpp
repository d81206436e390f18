#include "stacks/stacks.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "stacks/allocator_frames.h"
#include "stacks/call_site_rule.h"

namespace cumemtrace {

std::string basename_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

namespace {

std::string whole_name(const Frame& f) {
  if (!f.function.empty()) return f.function;
  char buf[40];
  if (f.module.empty()) {
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(f.ip));
    return buf;
  }
  std::snprintf(buf, sizeof buf, "+0x%llx", static_cast<unsigned long long>(f.offset));
  return f.module + buf;
}

std::string line_or_unknown(const Frame& f) { return f.line ? std::to_string(f.line) : "?"; }
std::string module_or_unknown(const Frame& f) { return f.module.empty() ? "?" : f.module; }

}  // namespace

std::string describe(const Frame& f, FrameStyle style) {
  const auto name = [&] { return f.function.empty() ? whole_name(f) : elide_templates(f.function); };
  const auto at = [&](const std::string& file) {
    return f.file.empty() ? std::string() : " at " + file + ":" + std::to_string(f.line);
  };
  switch (style) {
    case FrameStyle::kName: return whole_name(f);
    case FrameStyle::kReport:
      if (f.python) return f.file + ":" + line_or_unknown(f) + " in " + f.function;
      return name() + at(f.file) + " (" + module_or_unknown(f) + ")";
    case FrameStyle::kPage:
    case FrameStyle::kFlame:
      if (f.python) return f.function + " (" + f.file + ":" + line_or_unknown(f) + ")";
      return name() + at(style == FrameStyle::kFlame ? basename_of(f.file) : f.file) + " (" + module_or_unknown(f) +
             ")";
    case FrameStyle::kLabel: {
      std::string s = f.python ? f.function : elide_templates(f.function);
      if (!f.file.empty()) s += " (" + basename_of(f.file) + ":" + line_or_unknown(f) + ")";
      return s;
    }
    case FrameStyle::kExport:
      if (f.python) return f.function + " (" + source_key(f.file) + ":" + line_or_unknown(f) + ")";
      return whole_name(f) + " [" + module_or_unknown(f) + "]";
    case FrameStyle::kCaller:
      if (f.python) return f.function.empty() ? source_key(f.file) + ":" + std::to_string(f.line) : f.function;
      return name();
    case FrameStyle::kCallerAt: {
      if (f.file.empty()) return describe(f, FrameStyle::kCaller);
      const std::string where = source_key(f.file) + ":" + std::to_string(f.line);
      return f.python ? where + " in " + f.function : name() + " at " + where;
    }
  }
  return whole_name(f);
}

std::string source_key(std::string_view file) {
  size_t below = std::string_view::npos;
  for (std::string_view root : {"site-packages/", "dist-packages/"})
    if (const size_t at = file.rfind(root); at != std::string_view::npos)
      below = below == std::string_view::npos ? at + root.size() : std::max(below, at + root.size());
  if (below != std::string_view::npos) return std::string(file.substr(below));
  const size_t slash = file.rfind('/');
  return std::string(slash == std::string_view::npos ? file : file.substr(slash + 1));
}

Stacks::Stacks(const Trace& trace) : trace_(trace) {}

std::vector<uint64_t> Stacks::ips(uint32_t stack_id) const {
  std::vector<uint64_t> out;
  // A damaged file could make parents loop; no real stack is deeper than the tree is big.
  const size_t limit = trace_.stack_nodes.size();
  for (uint32_t id = stack_id; id != 0 && out.size() < limit;) {
    auto it = trace_.stack_nodes.find(id);
    if (it == trace_.stack_nodes.end()) break;
    out.push_back(it->second.ip);
    id = it->second.parent;
  }
  return out;
}

const ModuleInfo* Stacks::module_of(uint64_t ip) const {
  // Modules are few (hundreds) and call sites are cached, so a reverse scan is enough;
  // reverse because a re-reported (reloaded) module supersedes the older record.
  for (auto it = trace_.modules.rbegin(); it != trace_.modules.rend(); ++it)
    if (ip >= it->start && ip < it->end) return &*it;
  return nullptr;
}

std::string Stacks::module_basename(uint64_t ip) const {
  const ModuleInfo* m = module_of(ip);
  return m ? basename_of(m->path) : std::string();
}

bool is_cuda_or_tracer_module(std::string_view b) {
  return b.starts_with("libcumemtrace") || b.starts_with("libcuda.so") || b.starts_with("libcudart");
}

bool Stacks::is_cuda_or_hook(uint64_t ip) const { return is_cuda_or_tracer_module(module_basename(ip)); }

CallSite Stacks::call_site(uint32_t stack_id) const {
  if (stack_id == 0) return {0, "?"};
  if (auto it = site_cache_.find(stack_id); it != site_cache_.end()) return it->second;
  CallSite site{stack_id, "?"};
  const size_t limit = trace_.stack_nodes.size();
  size_t steps = 0;
  uint32_t last = stack_id;
  for (uint32_t id = stack_id; id != 0 && steps++ < limit;) {
    auto it = trace_.stack_nodes.find(id);
    if (it == trace_.stack_nodes.end()) break;
    last = id;
    if (!is_cuda_or_hook(it->second.ip)) {
      std::string lib = module_basename(it->second.ip);
      site = {past_allocator(id), lib.empty() ? "?" : lib, id};
      site_cache_[stack_id] = site;
      return site;
    }
    id = it->second.parent;
  }
  // Every frame is a hook or CUDA (e.g. an allocation the runtime makes on its own):
  // blame the outermost frame we have.
  auto it = trace_.stack_nodes.find(last);
  std::string lib = it != trace_.stack_nodes.end() ? module_basename(it->second.ip) : "";
  site = {last, lib.empty() ? "?" : lib, last};
  site_cache_[stack_id] = site;
  return site;
}

const Symbol* Stacks::symbol(uint64_t ip) const {
  if (auto it = trace_.symbols.find(ip); it != trace_.symbols.end()) return &it->second;
  if (extra_)
    if (auto e = extra_->find(ip); e != extra_->end()) return &e->second;
  return nullptr;
}

uint32_t Stacks::past_allocator(uint32_t owner) const {
  const size_t limit = trace_.stack_nodes.size();
  size_t steps = 0;
  for (uint32_t id = owner; id != 0 && steps++ < limit;) {
    auto it = trace_.stack_nodes.find(id);
    if (it == trace_.stack_nodes.end()) break;
    const Symbol* s = symbol(it->second.ip);
    if (!s || !is_allocator_frame(s->function)) return id;
    id = it->second.parent;
  }
  return owner;  // allocator frames all the way out (or a cut stack): the owner stands
}

std::vector<Frame> Stacks::frames(uint32_t node, size_t max_frames) const {
  std::vector<Frame> out;
  for (uint64_t ip : ips(node)) {
    if (out.size() >= max_frames) break;
    Frame f;
    f.ip = ip;
    if (const ModuleInfo* m = module_of(ip)) {
      f.module = basename_of(m->path);
      f.offset = ip - m->load_bias;
    }
    if (const Symbol* s = symbol(ip)) {
      f.function = s->function;
      f.file = s->file;
      f.line = s->line;
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace cumemtrace
