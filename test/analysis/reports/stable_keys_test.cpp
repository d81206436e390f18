// Names and keys that hold across runs and checkouts (stacks.h: describe's kName, source_key;
// docs/cli.md): one program traced twice, its stripped library loaded at another base and
// its sources in another folder, gives equal keys everywhere they are compared.
#include "catch.h"

#include <sstream>
#include <string>
#include <vector>

#include "cli/baseline_command.h"
#include "gate/baseline.h"
#include "parse_built.h"
#include "render/export/folded.h"
#include "render/report_text.h"
#include "reports/report.h"
#include "sizes.h"
#include "stacks/stacks.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::TraceBuilder;

namespace {

// main (app, main.cpp:40) calls into libstripped.so at offset 0x1234 (no symbol), which
// keeps 8 MiB to the end; main also calls make_buffer (train.cpp:12), 4 MiB freed again.
// `base`: where libstripped.so was loaded; `folder`: where the program was built.
std::string traced(uint64_t base, const std::string& folder) {
  TraceBuilder b;
  b.process().device(0, 1024 * MiB);
  b.module(base, base, base + 0x200000, "/opt/lib/libstripped.so");
  b.module(0, 0x400000, 0x500000, folder + "/bin/app");
  b.stack(2, 0, 0x401000).stack(1, 2, base + 0x1234).stack(3, 2, 0x402000);
  b.symbol(0x401000, "main", folder + "/src/main.cpp", 40);
  b.symbol(0x402000, "make_buffer", folder + "/src/train.cpp", 12);
  b.alloc(1 * ms, 0x7f7000000000, 8 * MiB, 1);
  b.alloc(2 * ms, 0x7f7000800000, 4 * MiB, 3);
  b.free(3 * ms, 0x7f7000800000);
  b.end(10 * ms);
  return b.bytes();
}

Report report_of(const Trace& t) {
  ReportOptions ro;  // as `baseline` reads a trace (baseline_command.cpp)
  ro.top = SIZE_MAX;
  ro.frames = 1;
  return build_report(t, ro);
}

std::string folded_at_end(const Trace& t) {
  std::ostringstream out;
  write_folded(out, {{&t, t.end->time_ns}});
  return out.str();
}

}  // namespace

TEST_CASE(
    "stable names: a frame without a symbol is its module and offset, a file below site-packages or its "
    "basename") {
  Frame f;
  f.ip = 0x7f0000001234;
  CHECK(describe(f, FrameStyle::kName) == "0x7f0000001234");  // no module covers it: the address is all there is
  f.module = "libstripped.so";
  f.offset = 0x1234;
  CHECK(describe(f, FrameStyle::kName) == "libstripped.so+0x1234");
  f.function = "make_buffer";
  CHECK(describe(f, FrameStyle::kName) == "make_buffer");

  CHECK(source_key("/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py") == "torch/nn/modules/linear.py");
  CHECK(source_key("/usr/lib/python3/dist-packages/site-packages/numpy/core.py") == "numpy/core.py");
  CHECK(source_key("/home/a/proj/src/train.cpp") == "train.cpp");
  CHECK(source_key("train.py") == "train.py");
  CHECK(source_key("<frozen runpy>") == "<frozen runpy>");
}

// Each form as its output has it (the report's stacks, the page's bands, flame graph and site
// labels, the exports, the call-site names; their own tests hold the whole outputs), worked
// out by hand from the forms stacks.h lists: templates elided where a person reads the name,
// the file whole, by base name or below site-packages, "?" for what is not known.
TEST_CASE("describe: one frame in every form, native named and unnamed, Python with and without a line") {
  Frame n;  // a symbolized native frame
  n.ip = 0x7f0000001234;
  n.module = "libapp.so";
  n.offset = 0x1234;
  n.function = "std::vector<int>::push_back";
  n.file = "/src/app/train.cpp";
  n.line = 25;
  CHECK(describe(n, FrameStyle::kName) == "std::vector<int>::push_back");
  CHECK(describe(n, FrameStyle::kReport) == "std::vector<…>::push_back at /src/app/train.cpp:25 (libapp.so)");
  CHECK(describe(n, FrameStyle::kPage) == "std::vector<…>::push_back at /src/app/train.cpp:25 (libapp.so)");
  CHECK(describe(n, FrameStyle::kFlame) == "std::vector<…>::push_back at train.cpp:25 (libapp.so)");
  CHECK(describe(n, FrameStyle::kLabel) == "std::vector<…>::push_back (train.cpp:25)");
  CHECK(describe(n, FrameStyle::kExport) == "std::vector<int>::push_back [libapp.so]");
  CHECK(describe(n, FrameStyle::kCaller) == "std::vector<…>::push_back");
  CHECK(describe(n, FrameStyle::kCallerAt) == "std::vector<…>::push_back at train.cpp:25");

  Frame u;  // no symbol, no module: the address is all there is
  u.ip = 0x7f0000001234;
  CHECK(describe(u, FrameStyle::kName) == "0x7f0000001234");
  CHECK(describe(u, FrameStyle::kReport) == "0x7f0000001234 (?)");
  CHECK(describe(u, FrameStyle::kPage) == "0x7f0000001234 (?)");
  CHECK(describe(u, FrameStyle::kFlame) == "0x7f0000001234 (?)");
  CHECK(describe(u, FrameStyle::kLabel) == "");
  CHECK(describe(u, FrameStyle::kExport) == "0x7f0000001234 [?]");
  CHECK(describe(u, FrameStyle::kCaller) == "0x7f0000001234");
  CHECK(describe(u, FrameStyle::kCallerAt) == "0x7f0000001234");

  Frame p;  // a Python frame below site-packages
  p.python = true;
  p.function = "forward";
  p.file = "/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py";
  p.line = 125;
  CHECK(describe(p, FrameStyle::kName) == "forward");
  CHECK(describe(p, FrameStyle::kReport) ==
        "/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py:125 in forward");
  CHECK(describe(p, FrameStyle::kPage) ==
        "forward (/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py:125)");
  CHECK(describe(p, FrameStyle::kFlame) ==
        "forward (/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py:125)");
  CHECK(describe(p, FrameStyle::kLabel) == "forward (linear.py:125)");
  CHECK(describe(p, FrameStyle::kExport) == "forward (torch/nn/modules/linear.py:125)");
  CHECK(describe(p, FrameStyle::kCaller) == "forward");
  CHECK(describe(p, FrameStyle::kCallerAt) == "torch/nn/modules/linear.py:125 in forward");
  // An unknown line reads "?" where a person reads it, and stays 0 in the caller's forms.
  p.line = 0;
  CHECK(describe(p, FrameStyle::kReport) ==
        "/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py:? in forward");
  CHECK(describe(p, FrameStyle::kExport) == "forward (torch/nn/modules/linear.py:?)");
  CHECK(describe(p, FrameStyle::kCallerAt) == "torch/nn/modules/linear.py:0 in forward");
  p.function.clear();
  CHECK(describe(p, FrameStyle::kCaller) == "torch/nn/modules/linear.py:0");
}

TEST_CASE("stable keys: a stripped library loaded at two bases and sources in two folders give equal keys") {
  const std::string bytes_a = traced(0x7f0000000000, "/home/a/proj");
  const std::string bytes_b = traced(0x7f5500000000, "/home/b/other-checkout");
  const Trace a = parse_trace(cumemtrace::test::span_of(bytes_a));
  const Trace b = parse_trace(cumemtrace::test::span_of(bytes_b));
  const Report ra = report_of(a), rb = report_of(b);

  // Baseline keys by hand: the stripped frame is its module and 0x1234 (ip less the load
  // base), the symbolized one "LIBRARY FUNCTION FILE:LINE" with the file's basename.
  // At the peak (2 ms) both are live: 8 MiB and 4 MiB; at the end 8 MiB, a possible leak.
  const Baseline ba = baseline_of({ra}), bb = baseline_of({rb});
  REQUIRE(ba.sites.size() == 2);
  const auto stripped = ba.sites.find({"libstripped.so+0x1234", 0});
  REQUIRE(stripped != ba.sites.end());
  CHECK(stripped->second.bytes_at_peak == 8 * MiB);
  CHECK(stripped->second.leaked == 8 * MiB);
  const auto named = ba.sites.find({"app make_buffer train.cpp:12", 0});
  REQUIRE(named != ba.sites.end());
  CHECK(named->second.bytes_at_peak == 4 * MiB);
  CHECK(named->second.leaked == 0);
  CHECK(to_json(ba) == to_json(bb));

  // diff and check --baseline: nothing new, nothing gone, every limit holds at 0 %.
  CHECK(diff_sites(ba, bb).empty());
  std::string error;
  const auto tol = parse_tolerance("0%", &error);
  REQUIRE(tol);
  const TraceCheck c = check_against(ba, bb, *tol);
  REQUIRE(!c.results.empty());
  for (const auto& r : c.results) CHECK(r.ok);

  // The folded export names the stripped frame the same way in both.
  CHECK(folded_at_end(a) == "cuda:0;main [app];libstripped.so+0x1234 [libstripped.so] 8388608\n");
  CHECK(folded_at_end(b) == folded_at_end(a));

  // The report shows the offset, never the address it was loaded at.
  std::ostringstream text;
  write_text(text, rb);
  CHECK(text.str().find("libstripped.so+0x1234") != std::string::npos);
  CHECK(text.str().find("0x7f5500001234") == std::string::npos);
}
