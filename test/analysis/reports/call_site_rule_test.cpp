// The call-site rule (analysis/stacks/call_site_rule.h, issue 25 §5): growth sites at the user's
// frame, past allocator and framework-dispatch frames and library Python frames; options
// that widen or narrow it; template arguments elided in text.
#include "catch.h"

#include <sstream>

#include "stacks/call_site_rule.h"
#include "gate/check.h"
#include "read/event_source.h"
#include "reports/report.h"
#include "report_both.h"
#include "render/report_text.h"
#include "trace_builder.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::report_both;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;

namespace {

// Resets the rule however a test ends.
struct Rule {
  Rule(CallSiteRule r, std::vector<std::string> packages = {}) { set_call_site_rule(r, std::move(packages)); }
  ~Rule() { set_call_site_rule(CallSiteRule::kUser, {}); }
};

// Four iterations marked "step" (10 .. 40 ms, clean end at 50): `each` allocates 1 MiB per
// iteration through stack `each`, `once` 4 MiB in the first through stack `once`.
void steps(TraceBuilder& b, uint32_t each, uint32_t once, uint32_t each_py = 0, uint32_t once_py = 0) {
  uint64_t a = 0x7f0000000000, events = 0;
  auto alloc = [&](uint64_t t, uint64_t size, uint32_t stack, uint32_t py) {
    const auto e = TraceBuilder::ev(t * ms, fmt::Op::kAlloc, fmt::Kind::kDevice, a += 64 * MiB, size, 0, stack, 1);
    b.record(fmt::RecordType::kEvent, TraceBuilder::pod(e) + (py ? TraceBuilder::pod(fmt::EventPython{py}) : ""));
    ++events;
  };
  for (uint64_t t = 10; t <= 40; t += 10) {
    b.mark(t * ms, "step");
    alloc(t + 1, MiB, each, each_py);
    if (t == 10) alloc(t + 2, 4 * MiB, once, once_py);
  }
  b.end(50 * ms, events);
}

// Native stacks of a C++ program on PyTorch: train_step and eval_step each reach the
// caching allocator through the same registered kernel.
void torch_stacks(TraceBuilder& b) {
  b.process().device(0, 1024 * MiB);
  b.stack(1, 0, 0x500000).stack(2, 1, 0x600000).stack(3, 2, 0x700000);
  b.stack(4, 0, 0x510000).stack(5, 4, 0x600000).stack(6, 5, 0x700000);
  b.symbol(0x500000, "train_step(int)", "train.cpp", 12).symbol(0x510000, "eval_step()", "train.cpp", 30);
  b.symbol(0x600000, "at::(anonymous namespace)::wrapper_CUDA__empty_strided(c10::ArrayRef<long>, c10::ArrayRef<long>)",
           "", 0);
  b.symbol(0x700000,
           "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long)", "",
           0);
}

const GrowthSite* by_function(const Growth& g, const std::string& function) {
  for (const auto& s : g.sites)
    if (!s.frames.empty() && s.frames[0].function == function) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("call-site rule: growth sites at the program's own native frame, past dispatch and allocator frames") {
  TraceBuilder b;
  torch_stacks(b);
  steps(b, 3, 6);
  const Report r = report_both(b, "t.trace");
  REQUIRE(r.growth.sites.size() == 2);
  const GrowthSite* leak = by_function(r.growth, "train_step(int)");
  REQUIRE(leak);
  CHECK(leak->cls == GrowthSite::Class::kLeak);
  CHECK(leak->growth_per_iteration == MiB);
  CHECK(leak->bytes_at == std::vector<uint64_t>{0, 1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB});
  const GrowthSite* once = by_function(r.growth, "eval_step()");
  REQUIRE(once);
  CHECK(once->cls == GrowthSite::Class::kOneTime);
  CHECK(once->bytes_at == std::vector<uint64_t>{0, 4 * MiB, 4 * MiB, 4 * MiB, 4 * MiB});
}

TEST_CASE("call-site rule: --call-site=innermost keys growth at the allocator's own frame (one site)") {
  const Rule innermost(CallSiteRule::kInnermost);
  TraceBuilder b;
  torch_stacks(b);
  steps(b, 3, 6);
  const Report r = report_both(b, "t.trace");
  REQUIRE(r.growth.sites.size() == 1);
  CHECK(r.growth.sites[0].frames.at(0).ip == 0x700000);
  CHECK(r.growth.sites[0].bytes_at == std::vector<uint64_t>{0, 5 * MiB, 6 * MiB, 7 * MiB, 8 * MiB});
  CHECK(r.growth.sites[0].cls == GrowthSite::Class::kLeak);  // the last two steps: 1 MiB each
}

namespace {

// One native stack (the interpreter), two Python lines of the user's train.py calling into
// torch (site-packages) and the standard library's contextlib.
void python_stacks(TraceBuilder& b) {
  b.process().device(0, 1024 * MiB).stack(1, 0, 0x401000);
  const char* names[] = {"/home/u/train.py",
                         "step",
                         "<module>",
                         "/usr/lib/python3/dist-packages/torch/nn/linear.py",
                         "forward",
                         "/usr/lib/python3.11/contextlib.py",
                         "inner"};
  for (uint32_t id = 1; id <= 7; ++id) {
    std::string p = TraceBuilder::pod(fmt::PyStringRecord{id});
    TraceBuilder::str(p, names[id - 1]);
    b.record(fmt::RecordType::kPyString, p);
  }
  auto frame = [&](uint32_t id, uint32_t parent, uint32_t file, uint32_t function, int32_t line) {
    b.record(fmt::RecordType::kPyFrame, TraceBuilder::pod(fmt::PyFrameRecord{id, parent, file, function, line, 0}));
  };
  frame(1, 0, 1, 3, 50);   // train.py:50 <module>
  frame(2, 1, 1, 2, 12);   // train.py:12 step
  frame(3, 2, 4, 5, 116);  // linear.py:116 forward
  frame(4, 3, 6, 7, 79);   // contextlib.py:79 inner
  frame(5, 1, 1, 2, 14);   // train.py:14 step
  frame(6, 5, 4, 5, 116);  // linear.py:116 forward
}

}  // namespace

TEST_CASE("call-site rule: a Python program's growth sites are its own lines, not torch's or the standard library's") {
  TraceBuilder b;
  python_stacks(b);
  steps(b, 1, 1, 4, 6);
  const Report r = report_both(b, "t.trace");
  REQUIRE(r.growth.sites.size() == 2);
  const GrowthSite& leak = r.growth.sites[0];
  CHECK(leak.cls == GrowthSite::Class::kLeak);
  REQUIRE(leak.python_frames.size() == 2);
  CHECK(leak.python_frames[0].file == "/home/u/train.py");
  CHECK(leak.python_frames[0].line == 12);
  CHECK(leak.bytes_at == std::vector<uint64_t>{0, 1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB});
  const GrowthSite& once = r.growth.sites[1];
  CHECK(once.cls == GrowthSite::Class::kOneTime);
  CHECK(once.python_frames.at(0).line == 14);
}

TEST_CASE(
    "call-site rule: --user-package torch makes torch's own line the site, --call-site=native sets Python aside") {
  SECTION("user package") {
    const Rule torch(CallSiteRule::kUser, {"torch"});
    TraceBuilder b;
    python_stacks(b);
    steps(b, 1, 1, 4, 6);
    const Report r = report_both(b, "t.trace");
    // Both lines reach linear.py:116, from two lines of step: two sites, each named by its
    // caller's line (one function calls both).
    REQUIRE(r.growth.sites.size() == 2);
    for (const GrowthSite& site : r.growth.sites) {
      CHECK(site.python_frames.at(0).file == "/usr/lib/python3/dist-packages/torch/nn/linear.py");
      CHECK(site.python_frames.at(0).line == 116);
    }
    CHECK(r.growth.sites[0].caller.text == " ← train.py:12 in step");
    CHECK(r.growth.sites[0].bytes_at == std::vector<uint64_t>{0, 1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB});
    CHECK(r.growth.sites[1].caller.text == " ← train.py:14 in step");
    CHECK(r.growth.sites[1].bytes_at == std::vector<uint64_t>{0, 4 * MiB, 4 * MiB, 4 * MiB, 4 * MiB});
  }
  SECTION("native") {
    const Rule native(CallSiteRule::kNative);
    TraceBuilder b;
    python_stacks(b);
    steps(b, 1, 1, 4, 6);
    const Report r = report_both(b, "t.trace");
    REQUIRE(r.growth.sites.size() == 1);
    CHECK(r.growth.sites[0].python_frames.empty());
  }
}

TEST_CASE("template arguments are elided in text, operators stay whole") {
  CHECK(elide_templates("std::vector<int, std::allocator<int> >::push_back(int const&)") ==
        "std::vector<…>::push_back(int const&)");
  CHECK(elide_templates("a<b<c>>::d<e>(f<g>)") == "a<…>::d<…>(f<…>)");
  CHECK(elide_templates("bool operator< <Key>(Key const&, Key const&)") ==
        "bool operator< <…>(Key const&, Key const&)");
  CHECK(elide_templates("std::ostream& operator<<(std::ostream&, Foo const&)") ==
        "std::ostream& operator<<(std::ostream&, Foo const&)");
  CHECK(elide_templates("auto operator<=>(X const&) const") == "auto operator<=>(X const&) const");
  CHECK(elide_templates("plain_function(int)") == "plain_function(int)");
  CHECK(elide_templates("broken<(int)") == "broken<(int)");  // unbalanced: whole
}

namespace {

// `check`'s message for one limit on the two-line Python program of python_stacks().
std::string check_message(Limit::What what, const char* limit) {
  TraceBuilder b;
  python_stacks(b);
  steps(b, 1, 1, 4, 6);
  const Trace t = parse_trace(b.vec(), "t.trace");
  const Report rep = build_report(t, ReportOptions{});
  std::string error;
  const auto l = parse_limit(what, limit, &error);
  REQUIRE(l);
  const TraceCheck c = check_trace(t, MemoryEvents(t.events), rep, {*l});
  REQUIRE(c.results.size() == 1);
  CHECK_FALSE(c.results[0].ok);
  return c.results[0].message;
}

}  // namespace

TEST_CASE("check names the user's own Python line for leaks and growth, as the report does") {
  // Before: the first native frame's function (here none: the interpreter's stack is not
  // symbolized), so check named no line at all; on the H200 it named torch's create_out.
  const std::string leaked = check_message(Limit::What::kLeaked, "0");
  INFO(leaked);
  CHECK(leaked.find("leaked on device 0: 8.00 MiB (8,388,608 B), limit 0 B; top call sites: 4.00 MiB from ? (") == 0);
  CHECK(leaked.find("4.00 MiB from ? (/home/u/train.py:12 in step)") != std::string::npos);
  CHECK(leaked.find("4.00 MiB from ? (/home/u/train.py:14 in step)") != std::string::npos);
  const std::string growth = check_message(Limit::What::kGrowth, "0");
  CHECK(growth ==
        "growth per iteration on device 0: 1.00 MiB (1,048,576 B), limit 0 B; leaking from ? "
        "(/home/u/train.py:12 in step)");
  SECTION("--call-site=native sets the Python lines aside") {
    const Rule native(CallSiteRule::kNative);
    CHECK(check_message(Limit::What::kGrowth, "0").find("train.py") == std::string::npos);
  }
}

namespace {

// The text report's Summary block, whole.
std::string summary_of(const TraceBuilder& b) {
  const Trace t = parse_trace(b.vec(), "t.trace");
  std::ostringstream out;
  write_text(out, build_report(t, ReportOptions{}));
  const std::string text = out.str();
  const size_t from = text.find("\nSummary\n"), to = text.find("\n\n", from + 1);
  REQUIRE(from != std::string::npos);
  return text.substr(from + 1, to - from);
}

}  // namespace

TEST_CASE(
    "the text report starts with its answer: the peak and what held it, failures, growth, what was live at exit") {
  SECTION("a Python loop that keeps 1 MiB per iteration at its own line") {
    TraceBuilder b;
    python_stacks(b);
    steps(b, 1, 1, 4, 6);
    // Peak 8 MiB when the fourth iteration's MiB arrives (41 ms; the trace's clock starts
    // at 0), held by train.py:12 (4 MiB) and train.py:14 (4 MiB, sorted as the report's
    // top call sites are); leak +1 MiB per iteration over 4 iterations (4 marks 10 ms apart,
    // and the clean end 10 ms after the last: a whole iteration); nothing freed, so all
    // 8 MiB is a possible leak at the clean end.
    const std::string s = summary_of(b);
    INFO(s);
    CHECK(s.find("Summary\n  peak on device 0: 8.00 MiB (8,388,608 B) at 0.041 s; held by 4.00 MiB from "
                 "/home/u/train.py:1") == 0);
    CHECK(s.find(", 4.00 MiB from /home/u/train.py:1") != std::string::npos);
    CHECK(s.find("  failed allocations: none\n"
                 "  growth per iteration over 4 iterations: +1.00 MiB from /home/u/train.py:12 in step\n"
                 "  at exit on device 0: possible leaks 8.00 MiB (8,388,608 B)\n") != std::string::npos);
  }
  SECTION("a failure, and a trace cut before its end") {
    TraceBuilder b;
    b.process().device(0, 1024 * MiB).stack(1, 0, 0x401000);
    b.symbol(0x401000, "load_weights()", "/src/app/model.cpp", 77);
    b.alloc(1 * ms, 0x7f0000000000, 600 * MiB, 1);
    b.failed(2 * ms, 600 * MiB, 2, 1);
    const std::string s = summary_of(b);  // no End record: cut
    CHECK(s ==
          "Summary\n"
          "  peak on device 0: 600.00 MiB (629,145,600 B) at 0.001 s; held by 600.00 MiB from load_weights() at "
          "model.cpp:77\n"
          "  failed allocations: 1; the first 600.00 MiB (629,145,600 B) on device 0 at 0.002 s from "
          "load_weights() at model.cpp:77: unknown\n"
          "  growth per iteration: no iterations found\n"
          "  at exit on device 0: unknown (the trace did not end cleanly); live when it stops 600.00 MiB "
          "(629,145,600 B)\n");
  }
}

TEST_CASE("the frames option limits the Python frames a text report prints too, and says how many it left out") {
  // Leak sites with three Python frames (contextlib.py:79 <- linear.py:116 <- train.py:12
  // <- train.py:50: four, innermost first) and two more (linear.py:116 <- train.py:14 <- :50).
  TraceBuilder b;
  python_stacks(b);
  steps(b, 1, 1, 4, 6);
  ReportOptions opt;
  opt.frames = 2;
  const Report r = report_both(b, "t.trace", opt);
  std::ostringstream out;
  write_text(out, r);
  const std::string text = out.str();
  INFO(text);
  CHECK(text.find("         /usr/lib/python3.11/contextlib.py:79 in inner\n"
                  "         /usr/lib/python3/dist-packages/torch/nn/linear.py:116 in forward\n"
                  "         ... 2 more Python frames (--frames)\n") != std::string::npos);
  CHECK(text.find("         /usr/lib/python3/dist-packages/torch/nn/linear.py:116 in forward\n"
                  "         /home/u/train.py:14 in step\n"
                  "         ... 1 more Python frame (--frames)\n") != std::string::npos);
  // The site is still named by the user's line, which is past the frames printed.
  CHECK(text.find("train.py:12 in step") != std::string::npos);
  // With the default, every frame of these stacks (at most 4) is printed.
  std::ostringstream whole;
  write_text(whole, report_both(b, "t.trace"));
  CHECK(whole.str().find("more Python frame") == std::string::npos);
  CHECK(whole.str().find("         /home/u/train.py:50 in <module>\n") != std::string::npos);
}

namespace {

Frame native_frame(const std::string& function, uint32_t line) {
  return Frame{0x400000 + line, "train", function, "/src/train.cpp", line};
}

}  // namespace

TEST_CASE("caller names: sites of one frame are told apart by the nearest caller where they differ") {
  const Frame helper = native_frame("alloc", 11);
  const std::vector<Frame> weights = {helper, native_frame("load_weights", 20), native_frame("main", 40)};
  const std::vector<Frame> history = {helper, native_frame("keep_history", 25), native_frame("step", 31),
                                      native_frame("main", 42)};
  // Two paths through one helper of the helper: they first differ at main's line.
  const std::vector<Frame> via_a = {helper, native_frame("fill", 50), native_frame("main", 43)};
  const std::vector<Frame> via_b = {helper, native_frame("fill", 50), native_frame("main", 44)};
  const std::vector<Frame> alone = {native_frame("other", 60), native_frame("main", 45)};
  CallerNames names;
  for (const auto* part : {&weights, &history, &via_a, &via_b, &alone}) names.add(*part);
  CHECK(names.of(weights).text == " ← load_weights");
  CHECK(names.of(weights).key == " <- load_weights train.cpp:20");
  CHECK(names.of(history).text == " ← keep_history");
  CHECK(names.of(via_a).text == " ← … ← main at train.cpp:43");  // two callers named main
  CHECK(names.of(via_a).key == " <- … <- main train.cpp:43");
  CHECK(names.of(via_b).key == " <- … <- main train.cpp:44");
  CHECK(names.of(alone).text.empty());  // no other site of its frame: the frame alone names it
  CHECK(names.of(alone).key.empty());
  // A site whose callers another's extend is told apart by all of them.
  CallerNames nested;
  const std::vector<Frame> shorter = {helper, native_frame("step", 31)};
  const std::vector<Frame> longer = {helper, native_frame("step", 31), native_frame("main", 42)};
  nested.add(shorter);
  nested.add(longer);
  CHECK(nested.of(shorter).text == " ← step");
  CHECK(nested.of(longer).text == " ← … ← main");
}

TEST_CASE("call-site rule: a helper reached from two callers is two growth sites, each named by its caller") {
  // alloc() at 0x401000 reached from load_weights (once, 4 MiB) and keep_history (1 MiB
  // per step, kept), both called from main: the steps of the first test above.
  TraceBuilder b;
  b.process().device(0, 1024 * MiB);
  b.stack(1, 0, 0x403000).stack(2, 1, 0x402000).stack(3, 2, 0x401000);  // main <- keep_history <- alloc
  b.stack(4, 1, 0x404000).stack(5, 4, 0x401000);                        // main <- load_weights <- alloc
  b.symbol(0x401000, "alloc", "/src/train.cpp", 11).symbol(0x402000, "keep_history", "/src/train.cpp", 25);
  b.symbol(0x403000, "main", "/src/train.cpp", 40).symbol(0x404000, "load_weights", "/src/train.cpp", 20);
  steps(b, 3, 5);
  const Report r = report_both(b, "t.trace");
  REQUIRE(r.growth.sites.size() == 2);
  CHECK(r.growth.sites[0].cls == GrowthSite::Class::kLeak);
  CHECK(r.growth.sites[0].caller.text == " ← keep_history");
  CHECK(r.growth.sites[0].bytes_at == std::vector<uint64_t>{0, 1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB});
  CHECK(r.growth.sites[1].cls == GrowthSite::Class::kOneTime);
  CHECK(r.growth.sites[1].caller.text == " ← load_weights");
  CHECK(r.growth.sites[1].bytes_at == std::vector<uint64_t>{0, 4 * MiB, 4 * MiB, 4 * MiB, 4 * MiB});
  // At the end (the peak): 4 MiB of keep_history's, 4 MiB of load_weights', named apart.
  REQUIRE(r.devices.at(0).top_sites.size() == 2);
  CHECK(user_frame_text(r.devices[0].top_sites[0].frames, {}, r.devices[0].top_sites[0].caller.text) ==
        "alloc ← keep_history");
  CHECK(user_frame_text(r.devices[0].top_sites[1].frames, {}, r.devices[0].top_sites[1].caller.text) ==
        "alloc ← load_weights");
}

TEST_CASE("caller names: two callers of one name are told apart by their lines") {
  // A Python helper called from two lines of one test function (test_cuda_memory.py:43, 44).
  auto py = [](const std::string& function, uint32_t line) {
    return Frame{0, "", function, "/w/tests/test_cuda_memory.py", line, true};
  };
  const std::vector<Frame> first = {py("malloc", 17), py("test_leaks", 43)};
  const std::vector<Frame> second = {py("malloc", 17), py("test_leaks", 44)};
  CallerNames names;
  names.add(first);
  names.add(second);
  CHECK(names.of(first).text == " ← test_cuda_memory.py:43 in test_leaks");
  CHECK(names.of(second).text == " ← test_cuda_memory.py:44 in test_leaks");
  CHECK(names.of(second).key == " <- test_cuda_memory.py:test_leaks:44");
}
