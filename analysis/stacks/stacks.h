// Stacks from the prefix tree, and who to blame for an allocation.
//
// A stack id names the innermost node of a root-outermost prefix tree, so walking
// parents yields frames innermost first. The innermost frames of every allocation are
// our own hook and the CUDA runtime/driver; blaming them says nothing. The *call site*
// is therefore the first frame (innermost first) outside libcumemtrace*, libcuda.so*
// and libcudart*, and since a node names its whole path to the root, that frame's node
// id identifies the call site together with everything that called it. The *library*
// is the basename of that frame's module (libc10_cuda.so, libcublasLt.so.13, a program).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "read/reader.h"

namespace cumemtrace {

struct CallSite {
  uint32_t node = 0;    // StackNode id of the call-site frame; 0: no stack recorded
  std::string library;  // module basename of the owner frame; "?" when unknown
  uint32_t owner = 0;   // the first frame outside the tracer and CUDA (the allocator's
                        // own call, when the call site was moved past allocator frames)
};

struct Frame {
  uint64_t ip = 0;
  std::string module;    // basename; empty when no module covers the ip
  std::string function;  // empty when not symbolized
  std::string file;
  uint32_t line = 0;
  bool python = false;  // a Python frame (trace 1.6): file, function and line only
  bool entry = false;   // ... the first that its evaluation loop ran (python_stacks.h)
  uint64_t offset = 0;  // ip less its module's load bias: the same in every run (describe)
};

class Stacks {
 public:
  explicit Stacks(const Trace& trace);

  // Innermost first. Stops at a missing node or after a cycle-proof number of steps.
  std::vector<uint64_t> ips(uint32_t stack_id) const;

  // The module record covering ip (the latest such record), or nullptr.
  const ModuleInfo* module_of(uint64_t ip) const;
  std::string module_basename(uint64_t ip) const;

  CallSite call_site(uint32_t stack_id) const;

  // Up to `max_frames` frames starting at call-site node `node`, symbolized from the
  // trace's symbols (or `extra`, symbols resolved in memory).
  std::vector<Frame> frames(uint32_t node, size_t max_frames) const;

  void set_symbols(const std::unordered_map<uint64_t, Symbol>* extra) { extra_ = extra; }

  const Trace& trace() const { return trace_; }

 private:
  bool is_cuda_or_hook(uint64_t ip) const;
  const Symbol* symbol(uint64_t ip) const;
  // From `owner` outward, past allocator frames (allocator_frames.h), or `owner` itself.
  uint32_t past_allocator(uint32_t owner) const;

  const Trace& trace_;
  const std::unordered_map<uint64_t, Symbol>* extra_ = nullptr;
  mutable std::unordered_map<uint32_t, CallSite> site_cache_;
};

std::string basename_of(const std::string& path);

// How a frame is put into words: one function for every display, export and key, each
// form as its output has it (docs/cli.md, docs/formats.md, docs/html-report.md). A frame's
// name holds across runs and checkouts (docs/cli.md, "Call sites"): its function, or
// "module+0xOFFSET" (offset from the module's load base) when it has no symbol; "0xIP" only
// when no module covers it. Below, NAME is that name with the function's template arguments
// elided (elide_templates), SOURCE the file as keys hold it (source_key), LINE? the line or
// "?" when unknown. Python frame | native frame:
enum class FrameStyle {
  kName,      // the name whole | the same: memviz's frames, keys
  kReport,    // report's stacks: "FILE:LINE? in FUNCTION" | "NAME at FILE:LINE (MODULE)"
  kPage,      // the page's band frames: "FUNCTION (FILE:LINE?)" | as kReport
  kFlame,     // the page's flame graph: as kPage, the native file by its base name
  kLabel,     // the page's short site labels: "FUNCTION (BASENAME:LINE?)" | the same, the
              // function's templates elided; "" when neither function nor file is known
  kExport,    // folded, pprof, chrome, jsonl, the tree views: "FUNCTION (SOURCE:LINE?)" |
              // "the name whole [MODULE]"
  kCaller,    // a caller as a person names it: FUNCTION, else "SOURCE:LINE" | NAME
  kCallerAt,  // the same with its line: "SOURCE:LINE in FUNCTION" | "NAME at SOURCE:LINE"
};
// " at FILE:LINE" is left out when the file is not known, "(MODULE)" reads "(?)" when no
// module covers the frame. Raw text: a display escapes it (base/escape.h).
std::string describe(const Frame& f, FrameStyle style);
// A source file as keys hold it: the path below the last site-packages/ or dist-packages/
// ("torch/nn/modules/linear.py"), else its basename ("train.cpp").
std::string source_key(std::string_view file);
// A module of CUDA's (libcuda, libcudart) or the tracer's own, by its basename.
bool is_cuda_or_tracer_module(std::string_view basename);

}  // namespace cumemtrace
