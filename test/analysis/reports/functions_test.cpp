// Memory per function (reports/by/functions.h, `report --by function`): the program's own
// Python functions, inclusive, a recursive one counting an allocation once, the standard
// library's left out; each figure worked out by hand from the trace below.
#include "reports/by/functions.h"

#include <map>
#include <sstream>

#include "catch.h"
#include "parse_built.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "reports/report.h"

using namespace cumemtrace;
using cumemtrace::test::parse;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;

namespace {

// Python frames (innermost last here, as parents): 1 <module> (train.py:50); 2 step (:12)
// called by it; 3 contextlib's inner called by step; 4 load (:30) called by <module>;
// 5 step (:20) called by step (recursion). One native frame, not symbolized.
TraceBuilder by_function_trace() {
  TraceBuilder b;
  b.process().device(0, 1ull << 30).stack(1, 0, 0x401000);
  const char* names[] = {"/home/u/train.py", "step", "<module>", "load", "/usr/lib/python3.11/contextlib.py", "inner"};
  for (uint32_t id = 1; id <= 6; ++id) {
    std::string p = TraceBuilder::pod(fmt::PyStringRecord{id});
    TraceBuilder::str(p, names[id - 1]);
    b.record(fmt::RecordType::kPyString, p);
  }
  const auto frame = [&](uint32_t id, uint32_t parent, uint32_t file, uint32_t function, int32_t line) {
    b.record(fmt::RecordType::kPyFrame, TraceBuilder::pod(fmt::PyFrameRecord{id, parent, file, function, line, 0}));
  };
  frame(1, 0, 1, 3, 50);
  frame(2, 1, 1, 2, 12);
  frame(3, 2, 5, 6, 79);
  frame(4, 1, 1, 4, 30);
  frame(5, 2, 1, 2, 20);
  const auto alloc = [&](uint64_t t, uint64_t address, uint64_t size, uint32_t python) {
    const auto e = TraceBuilder::ev(t, fmt::Op::kAlloc, fmt::Kind::kDevice, address, size, 0, 1, 1);
    b.record(fmt::RecordType::kEvent, TraceBuilder::pod(e) + TraceBuilder::pod(fmt::EventPython{python}));
  };
  // Live bytes per function after each: <module> 1000, 3000, 3500, 2500, 2800;
  // step 1000, -, 1500, 500, 800; load -, 2000.
  alloc(10, 0xA000, 1000, 3);  // contextlib.inner <- step <- <module>
  alloc(20, 0xB000, 2000, 4);  // load <- <module>
  alloc(30, 0xC000, 500, 5);   // step <- step <- <module>
  b.free(40, 0xA000);
  alloc(50, 0xD000, 300, 2);  // step <- <module>
  b.end(60);
  return b;
}

}  // namespace

TEST_CASE("memory per function: the program's own functions, inclusive, recursion counted once") {
  ReportOptions opt;
  opt.by_function = true;
  const Report r = build_report(parse(by_function_trace()), opt);
  REQUIRE(r.functions);
  REQUIRE(r.functions->size() == 3);  // contextlib's inner is the standard library's
  const FunctionRow& module = (*r.functions)[0];
  CHECK(module.name == "train.py:<module>");
  CHECK(module.python);
  CHECK(module.allocations == 4);
  CHECK(module.bytes_allocated == 3800);
  CHECK(module.peak_bytes == 3500);
  CHECK(module.held_after_bytes == 2800);
  const FunctionRow& load = (*r.functions)[1];
  CHECK(load.name == "train.py:load");
  CHECK(load.allocations == 1);
  CHECK(load.bytes_allocated == 2000);
  CHECK(load.peak_bytes == 2000);
  CHECK(load.held_after_bytes == 2000);
  const FunctionRow& step = (*r.functions)[2];
  CHECK(step.name == "train.py:step");
  CHECK(step.allocations == 3);
  CHECK(step.bytes_allocated == 1800);
  CHECK(step.peak_bytes == 1500);
  CHECK(step.held_after_bytes == 800);

  const auto j = to_json(r);
  REQUIRE(j["by_function"].size() == 3);
  CHECK(j["by_function"][2]["function"] == "train.py:step");
  CHECK(j["by_function"][2]["peak_bytes"] == 1500);
  std::ostringstream text;
  write_text(text, r);
  INFO(text.str());
  CHECK(text.str().find("  train.py:step: 3 allocations of 1.76 KiB (1,800 B); at most 1.46 KiB (1,500 B) held at "
                        "once; held after 800 B\n") != std::string::npos);
  CHECK_FALSE(build_report(parse(by_function_trace()), ReportOptions{}).functions);
}

TEST_CASE("memory per function: native functions of the program, not the C runtime's start frames") {
  // One stack, innermost first: fill (prog) <- main (prog) <- __libc_start_call_main
  // (libc.so.6) <- _start (prog); a second thread's: worker (prog) <- start_thread (libc.so.6).
  // Symbols are by return address, as the symbolizer writes them.
  TraceBuilder b;
  b.process().device(0, 1ull << 30);
  b.module(0, 0x400000, 0x500000, "/usr/bin/prog").module(0, 0x7000000, 0x7100000, "/lib/x86_64-linux-gnu/libc.so.6");
  b.stack(1, 0, 0x401001).stack(2, 1, 0x7000101).stack(3, 2, 0x402001).stack(4, 3, 0x403001);
  b.stack(5, 0, 0x7000201).stack(6, 5, 0x404001);
  b.symbol(0x401001, "_start", "", 0).symbol(0x7000101, "__libc_start_call_main", "", 0);
  b.symbol(0x402001, "main", "prog.c", 20).symbol(0x403001, "fill", "prog.c", 10);
  b.symbol(0x7000201, "start_thread", "", 0).symbol(0x404001, "worker", "prog.c", 30);
  b.alloc(10, 0xA000, 1000, 4).alloc(20, 0xB000, 500, 6).end(30);
  ReportOptions opt;
  opt.by_function = true;
  const Report r = build_report(parse(b), opt);
  REQUIRE(r.functions);
  std::vector<std::string> names;
  for (const FunctionRow& f : *r.functions) names.push_back(f.name);
  CHECK(names == std::vector<std::string>{"prog:fill", "prog:main", "prog:worker"});
}
