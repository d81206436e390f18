// What the export tests share: a process with native and Python stacks, the traces the
// chrome and folded tests read, and the helpers to read their output. Included by
// export_test.cpp and export_command_test.cpp.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>
#include <nlohmann/json.hpp>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include "catch.h"
#include "read/event_source.h"
#include "render/export/chrome.h"
#include "render/export/folded.h"
#include "render/export/jsonl.h"
#include "render/export/memviz.h"
#include "reports/report.h"
#include "shell.h"
#include "trace_builder.h"
#include "parse_built.h"
#include "temp_dir.h"
#include "memviz_python.h"

namespace cumemtrace::test::exports {

using namespace cumemtrace;
using cumemtrace::test::load_with_python;
using cumemtrace::test::read_file;
using cumemtrace::test::span_of;
using cumemtrace::test::TraceBuilder;
using json = nlohmann::json;

namespace fmt = cumemtrace::format;

inline std::string tmp_path(const std::string& name) {
  return "/tmp/cumemtrace_export_test_" + std::to_string(getpid()) + "_" + name;
}

// A process with Python frames and a native stack through the interpreter:
//   node 1 main (python.c:10) <- node 2 _PyEval_EvalFrameDefault <- node 3 my_alloc (ext.c:20)
//   <- node 4 cudaMalloc in libcudart (the tracer's side: never a call site)
//   node 5 "other;alloc" (ext.c:30), called by main
// Python: frame 1 <module> (train.py:5, entry) <- frame 2 forward (train.py:42).
inline TraceBuilder python_process() {
  TraceBuilder b;
  b.process().device(0, 80ull << 30).device(1, 80ull << 30);
  b.api(1, "cudaMalloc").api(2, "cudaFree");
  b.module(0, 0x400000, 0x500000, "/usr/bin/python3.12");
  b.module(0, 0x7000000, 0x7100000, "/usr/lib/libcudart.so.12");
  b.stack(1, 0, 0x400100).stack(2, 1, 0x400200).stack(3, 2, 0x400300).stack(4, 3, 0x7000100).stack(5, 1, 0x400400);
  b.symbol(0x400100, "main", "python.c", 10).symbol(0x400200, "_PyEval_EvalFrameDefault", "ceval.c", 100);
  b.symbol(0x400300, "my_alloc", "ext.c", 20).symbol(0x7000100, "cudaMalloc", "api.cpp", 1);
  b.symbol(0x400400, "other;alloc", "ext.c", 30);
  for (auto [id, text] : {std::pair<uint32_t, std::string>{1, "train.py"}, {2, "forward"}, {3, "<module>"}}) {
    std::string p = TraceBuilder::pod(fmt::PyStringRecord{id});
    TraceBuilder::str(p, text);
    b.record(fmt::RecordType::kPyString, p);
  }
  b.record(fmt::RecordType::kPyFrame, TraceBuilder::pod(fmt::PyFrameRecord{1, 0, 1, 3, 5, fmt::kPyFrameEntry}));
  b.record(fmt::RecordType::kPyFrame, TraceBuilder::pod(fmt::PyFrameRecord{2, 1, 1, 2, 42, 0}));
  return b;
}

// An event of stack 4 with Python frame 2 as its innermost Python frame.
inline void python_event(TraceBuilder& b, fmt::EventRecord e) {
  e.stack_id = 4;
  b.record(fmt::RecordType::kEvent, TraceBuilder::pod(e) + TraceBuilder::pod(fmt::EventPython{2}));
}

inline Trace read_back(const TraceBuilder& b) { return parse_trace(span_of(b.bytes()), "t.trace"); }

inline json frame(const std::string& file, int line, const std::string& name) {
  return {{"filename", file}, {"line", line}, {"name", name}};
}

// my_alloc, then the two Python frames in place of the evaluation loop, then main.
inline const json kStack = json::array({frame("ext.c", 20, "my_alloc"), frame("train.py", 42, "forward"),
                                        frame("train.py", 5, "<module>"), frame("python.c", 10, "main")});

inline json entry(const std::string& action, uint64_t addr, uint64_t size, uint64_t time_us, const json& frames) {
  return {{"action", action}, {"addr", addr}, {"size", size}, {"stream", 0}, {"time_us", time_us}, {"frames", frames}};
}

// Device 0 and 1 of one process; what the chrome export of it must hold, in file order.
inline TraceBuilder chrome_trace() {
  TraceBuilder b = python_process();
  b.alloc(1000, 0x7f0000000000, 1000);
  b.alloc(2000, 0x7f1000000000, 500, 0, 1);
  b.mark(2200, "step 1");
  auto oom = TraceBuilder::ev(2500, fmt::Op::kAlloc, fmt::Kind::kDevice, 0, 4096, 0, 0, 1);
  oom.result = 2;
  python_event(b, oom);
  b.free(3000, 0x7f0000000000);
  b.snapshot(3500, fmt::SnapshotReason::kPeriodic, {{.device = 0, .nvml_used = 123456}, {.device = 1}});
  return b;
}

// Stack 4 (my_alloc, with Python frames) and stack 5 (other;alloc) on device 0:
//   t=1000 a1 1000 B (4)   t=2000 a2 2000 B (5)   t=3000 a3 500 B (4): peak 3500 B
//   t=4000 a2 freed        t=5000 a4 100 B, no stack
// plus managed and pinned memory, which are not device bytes.
inline TraceBuilder folded_trace() {
  TraceBuilder b = python_process();
  python_event(b, TraceBuilder::ev(1000, fmt::Op::kAlloc, fmt::Kind::kDevice, 0x10000, 1000, 0, 0, 1));
  b.alloc(2000, 0x20000, 2000, 5);
  python_event(b, TraceBuilder::ev(3000, fmt::Op::kAlloc, fmt::Kind::kDevice, 0x30000, 500, 0, 0, 1));
  b.alloc(3100, 0x90000, 7777, 5, 0, fmt::Kind::kManaged);
  b.alloc(3200, 0xa0000, 8888, 5, -1, fmt::Kind::kHostPinned);
  b.free(4000, 0x20000);
  b.alloc(5000, 0x40000, 100);
  b.end(6000);
  return b;
}

inline const std::string kMine =
    "cuda:0;main [python3.12];<module> (train.py:5);forward (train.py:42);my_alloc [python3.12]";
inline const std::string kOther = "cuda:0;main [python3.12];other,alloc [python3.12]";

// `t` is folded_trace() read back. Both ways a command reads it: held whole, and with its
// events read again from the bytes (TraceFile, a file over 32 MiB); they must agree. The
// first is returned.
inline std::string folded_at(const Trace& t, uint64_t at) {
  std::ostringstream out;
  write_folded(out, {{&t, at}});
  const TraceBuilder b = folded_trace();
  const TraceFile file(span_of(b.bytes()), "t.trace", /*hold_bytes=*/0);
  REQUIRE_FALSE(file.holds_events());
  FoldedStacks passes;
  passes.add(file.trace(), file.events(), at, false);
  std::ostringstream other;
  passes.write(other);
  CHECK(other.str() == out.str());
  return out.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Names in `dir` that contain ".tmp.".
inline std::vector<std::string> temporaries_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d))
      if (std::string(e->d_name).find(".tmp.") != std::string::npos) out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

}  // namespace cumemtrace::test::exports
