// Categories (issue 28 §1; stacks/categories.h, reports/by/categories.h): a training step's
// allocations by the default rules at the peak, at a failure and at the end, segments of
// PyTorch's cache said to be inferred, the user's rules first, a bad rules file named by line.
#include "catch.h"

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "sizes.h"
#include "render/report_json.h"
#include "report_both.h"
#include "reports/report.h"
#include "stacks/categories.h"
#include "temp_dir.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::report_both;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;

namespace {

const char* const kTorch = "/usr/lib/python3/dist-packages/torch/";

// Native stacks: 2 PyTorch's caching allocator under the interpreter (node 1, unsymbolized),
// 3 NCCL, 4 cuBLAS, 5 a program's main without Python, 7 PyTorch's allocator under
// AccumulateGrad on the autograd engine's thread (no Python frames).
// Python stacks, outermost train.py:<module> → train.py:main, then: 4 module.py to → _apply
// (weights); 6 module.py _call_impl → linear.py forward (activations); 7 adam.py
// _single_tensor_adam (optimizer); 9 _tensor.py backward → autograd/__init__.py backward
// (gradients, as AccumulateGrad's stack 7); 12 model.py build_model → module.py to → _apply (weights by default).
void cat_program(TraceBuilder& b) {
  b.process().device(0, 80 * GiB);
  b.module(0, 0x400000, 0x500000, "/usr/bin/python3.11");
  b.module(0, 0x700000, 0x710000, "/usr/lib/python3/dist-packages/torch/lib/libc10_cuda.so");
  b.module(0, 0x800000, 0x810000, "/usr/lib/x86_64-linux-gnu/libnccl.so.2");
  b.module(0, 0x900000, 0x910000, "/usr/local/cuda/lib64/libcublas.so.12");
  b.module(0, 0xa00000, 0xa10000, "/home/u/myprog");
  b.module(0, 0xb00000, 0xb10000, "/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so");
  b.symbol(0x700000,
           "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long)", "",
           0);
  b.symbol(0x800000, "ncclMemAlloc", "", 0).symbol(0x900000, "cublasCreate_v2", "", 0).symbol(0xa00000, "main", "", 0);
  b.symbol(0xb00000, "torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor>&&)", "", 0);
  b.stack(1, 0, 0x401000).stack(2, 1, 0x700000).stack(3, 1, 0x800000).stack(4, 1, 0x900000).stack(5, 0, 0xa00000);
  b.stack(6, 0, 0xb00000).stack(7, 6, 0x700000);
  const std::string torch = kTorch;
  const std::string names[] = {"/home/u/train.py",
                               "<module>",
                               "main",
                               torch + "nn/modules/module.py",
                               "to",
                               "_apply",
                               "_call_impl",
                               torch + "nn/modules/linear.py",
                               "forward",
                               torch + "optim/adam.py",
                               "_single_tensor_adam",
                               torch + "_tensor.py",
                               "backward",
                               torch + "autograd/__init__.py",
                               "/home/u/model.py",
                               "build_model"};
  for (uint32_t id = 1; id <= 16; ++id) {
    std::string p = TraceBuilder::pod(fmt::PyStringRecord{id});
    TraceBuilder::str(p, names[id - 1]);
    b.record(fmt::RecordType::kPyString, p);
  }
  auto frame = [&](uint32_t id, uint32_t parent, uint32_t file, uint32_t function) {
    b.record(fmt::RecordType::kPyFrame, TraceBuilder::pod(fmt::PyFrameRecord{id, parent, file, function, 10, 0}));
  };
  frame(1, 0, 1, 2), frame(2, 1, 1, 3);
  frame(3, 2, 4, 5), frame(4, 3, 4, 6);
  frame(5, 2, 4, 7), frame(6, 5, 8, 9);
  frame(7, 2, 10, 11);
  frame(8, 2, 12, 13), frame(9, 8, 14, 13);
  frame(10, 2, 15, 16), frame(11, 10, 4, 5), frame(12, 11, 4, 6);
}

struct Events {
  TraceBuilder& b;
  uint64_t written = 0;
  void put(fmt::EventRecord e, uint32_t py) {
    b.record(fmt::RecordType::kEvent, TraceBuilder::pod(e) + (py ? TraceBuilder::pod(fmt::EventPython{py}) : ""));
    ++written;
  }
  void alloc(uint64_t t, uint64_t address, uint64_t size, uint32_t stack, uint32_t py) {
    put(TraceBuilder::ev(t, fmt::Op::kAlloc, fmt::Kind::kDevice, address, size, 0, stack, 1), py);
  }
};

// A training step on device 0 (MiB; s: a segment of PyTorch's cache):
//   0.5 ms context 500                1 ms weights 40 s (0x1..)   2 ms NCCL 32     3 ms cuBLAS 8 (in a forward)
//   4 ms activations 20 s             5 ms gradients 40 s         6 ms backward's Python 10 s (gradients)
//   7 ms 100 s for a forward fails: live 150; NVML 714 = 150 tracked + 500 context + 16 slack + 48 untracked
//   8 ms activations freed            9 ms optimizer 80 s         10 ms other 2: the peak, 212
//   10.5 ms NVML 812 = 212 + 500 context + 100 untracked        11 ms the 10 freed; end at 20 ms, 202
// `weights_stack`: the Python stack of the weights (4: module.py _apply; 12: under build_model).
TraceBuilder cat_step(uint32_t weights_stack = 4) {
  TraceBuilder b;
  cat_program(b);
  Events e{b};
  b.event(TraceBuilder::ev(500'000, fmt::Op::kContextCreate, fmt::Kind::kDevice, 0, 500 * MiB));
  ++e.written;
  e.alloc(1 * ms, 0x10000000, 40 * MiB, 2, weights_stack);
  e.alloc(2 * ms, 0x20000000, 32 * MiB, 3, 0);
  e.alloc(3 * ms, 0x30000000, 8 * MiB, 4, 6);
  e.alloc(4 * ms, 0x40000000, 20 * MiB, 2, 6);
  e.alloc(5 * ms, 0x50000000, 40 * MiB, 7, 0);
  e.alloc(6 * ms, 0x60000000, 10 * MiB, 2, 9);
  auto failed = TraceBuilder::ev(7 * ms, fmt::Op::kAlloc, fmt::Kind::kDevice, 0, 100 * MiB, 0, 2, 1);
  failed.result = 2;  // CUDA_ERROR_OUT_OF_MEMORY
  e.put(failed, 6);
  b.snapshot(7 * ms + 100'000, fmt::SnapshotReason::kFailedAllocation,
             {TraceBuilder::Dev{0, 150 * MiB, 150 * MiB, 714 * MiB, GiB, 80 * GiB, 16 * MiB, 0, fmt::kMomentSame}});
  b.free(8 * ms, 0x40000000);
  ++e.written;
  e.alloc(9 * ms, 0x70000000, 80 * MiB, 2, 7);
  e.alloc(10 * ms, 0x80000000, 2 * MiB, 5, 0);
  b.snapshot(
      10 * ms + 500'000, fmt::SnapshotReason::kPeak,
      {TraceBuilder::Dev{0, 212 * MiB, 212 * MiB, 812 * MiB, GiB, 80 * GiB, fmt::kUnknown64, 0, fmt::kMomentSame}});
  b.free(11 * ms, 0x60000000);
  ++e.written;
  b.end(20 * ms, e.written);
  return b;
}

// (category, bytes, count, bytes inferred from a segment); count -1: in no allocation.
struct Row {
  std::string category;
  uint64_t bytes;
  int64_t count;
  uint64_t segment_bytes;
  bool operator==(const Row&) const = default;
};

std::vector<Row> rows_of(const std::vector<CategoryRow>& rows) {
  std::vector<Row> out;
  for (const auto& r : rows)
    out.push_back({r.category, r.bytes, r.allocations ? int64_t(r.count) : -1, r.segment_bytes});
  return out;
}

Report cat_report(const TraceBuilder& b, const CategoryRules& rules) {
  ReportOptions opt;
  opt.categories = &rules;
  return report_both(b, "t.trace", opt);
}

}  // namespace

TEST_CASE("categories by the default rules at the peak, at a failure and at the end") {
  const CategoryRules rules;
  const Report r = cat_report(cat_step(), rules);
  REQUIRE(r.devices.size() == 1);
  const DeviceReport& d = r.devices[0];
  REQUIRE(d.peak_bytes == 212 * MiB);
  REQUIRE(d.categories_at_peak);
  // Sorted by bytes, ties by name; NVML's 812 MiB less 212 tracked and the 500 MiB context.
  // Gradients: AccumulateGrad's 40 (no Python frames) and the 10 under backward's Python.
  CHECK(rows_of(*d.categories_at_peak) == std::vector<Row>{{"contexts", 500 * MiB, -1, 0},
                                                           {"untracked", 100 * MiB, -1, 0},
                                                           {"optimizer", 80 * MiB, 1, 80 * MiB},
                                                           {"gradients", 50 * MiB, 2, 50 * MiB},
                                                           {"weights", 40 * MiB, 1, 40 * MiB},
                                                           {"nccl", 32 * MiB, 1, 0},
                                                           {"cublas_workspace", 8 * MiB, 1, 0},
                                                           {"other", 2 * MiB, 1, 0}});
  // At the end no NVML reading is split: the context only.
  REQUIRE(d.categories_at_end);
  CHECK(rows_of(*d.categories_at_end) == std::vector<Row>{{"contexts", 500 * MiB, -1, 0},
                                                          {"optimizer", 80 * MiB, 1, 80 * MiB},
                                                          {"gradients", 40 * MiB, 1, 40 * MiB},
                                                          {"weights", 40 * MiB, 1, 40 * MiB},
                                                          {"nccl", 32 * MiB, 1, 0},
                                                          {"cublas_workspace", 8 * MiB, 1, 0},
                                                          {"other", 2 * MiB, 1, 0}});
  REQUIRE(r.failed.size() == 1);
  const FailedRow& f = r.failed[0];
  CHECK(f.request_category == "activations");
  CHECK(f.request_segment);
  REQUIRE(f.categories);
  // 714 MiB used: 150 tracked, 500 context, 16 of the async pool's slack, 48 untracked.
  CHECK(rows_of(*f.categories) == std::vector<Row>{{"contexts", 500 * MiB, -1, 0},
                                                   {"gradients", 50 * MiB, 2, 50 * MiB},
                                                   {"untracked", 48 * MiB, -1, 0},
                                                   {"weights", 40 * MiB, 1, 40 * MiB},
                                                   {"nccl", 32 * MiB, 1, 0},
                                                   {"activations", 20 * MiB, 1, 20 * MiB},
                                                   {"pool_slack", 16 * MiB, -1, 0},
                                                   {"cublas_workspace", 8 * MiB, 1, 0}});
}

TEST_CASE("categories: the text says a segment's category is inferred, JSON gives the figures and the rules' version") {
  const CategoryRules rules;
  const Report r = cat_report(cat_step(), rules);
  const std::string text = test::text_of(r);
  INFO(text);
  CHECK(text.find("\nBy category (rules cumemtrace-categories-1; docs/categories.md)\n") != std::string::npos);
  CHECK(text.find("  device 0 at its peak (212.00 MiB tracked):\n") != std::string::npos);
  CHECK(text.find("    optimizer         80.00 MiB (83,886,080 B) in 1 allocation (1 segment: category inferred from "
                  "the stack that grew it)\n") != std::string::npos);
  CHECK(text.find("    nccl              32.00 MiB (33,554,432 B) in 1 allocation\n") != std::string::npos);
  CHECK(text.find("    contexts          500.00 MiB (524,288,000 B), in no allocation\n") != std::string::npos);
  CHECK(text.find("  failed allocation 1 (100.00 MiB on device 0, itself activations, a segment): live then\n") !=
        std::string::npos);
  const auto j = to_json(r);
  CHECK(j["category_rules"]["rules_version"] == "cumemtrace-categories-1");
  CHECK(j["category_rules"]["user_rules"] == 0);
  const auto& peak = j["devices"][0]["categories"]["at_peak"];
  REQUIRE(peak.size() == 8);
  CHECK(peak[0]["category"] == "contexts");
  CHECK(peak[0]["count"].is_null());
  CHECK(peak[0]["in_allocations"] == false);
  CHECK(peak[2]["category"] == "optimizer");
  CHECK(peak[2]["bytes"] == 80 * MiB);
  CHECK(peak[2]["count"] == 1);
  CHECK(peak[2]["inferred_from_segment_bytes"] == 80 * MiB);
  CHECK(peak[2]["inferred_from_segment_count"] == 1);
  CHECK(j["failed_allocations"][0]["categories"]["request"] == "activations");
  CHECK(j["failed_allocations"][0]["categories"]["live"].size() == 8);
}

TEST_CASE("categories: without --by category the report has none") {
  const Report r = report_both(cat_step(), "t.trace");
  CHECK_FALSE(r.categories);
  CHECK_FALSE(r.devices.at(0).categories_at_peak);
  CHECK_FALSE(to_json(r).contains("category_rules"));
  CHECK(test::text_of(r).find("By category") == std::string::npos);
}

TEST_CASE("categories: a user's rule over an outer frame beats a default over an inner one") {
  CategoryRules rules;
  rules.add_user_rules(
      "# my rules\n\nmodel_weights   /home/u/model\\.py:build_model$  \n"
      "never\tno-frame-has-this\n");
  REQUIRE(rules.user_rules() == 2);
  CHECK(rules.rules()[0].category == "model_weights");
  CHECK(rules.rules()[0].regex == "/home/u/model\\.py:build_model$");
  CHECK(rules.rules()[0].line == 3);
  CHECK(rules.rules()[1].line == 4);
  // Under build_model, module.py's _apply is still the innermost Python frame.
  const Report r = cat_report(cat_step(12), rules);
  const auto& peak = rows_of(*r.devices.at(0).categories_at_peak);
  CHECK(std::find(peak.begin(), peak.end(), Row{"model_weights", 40 * MiB, 1, 40 * MiB}) != peak.end());
  CHECK(std::none_of(peak.begin(), peak.end(), [](const Row& w) { return w.category == "weights"; }));
  CHECK(test::text_of(r).find("(rules cumemtrace-categories-1, 2 rules of the user's first;") != std::string::npos);
  SECTION("the same stack without the user's rules is weights") {
    const CategoryRules defaults;
    const Report plain = cat_report(cat_step(12), defaults);
    const auto& p = rows_of(*plain.devices.at(0).categories_at_peak);
    CHECK(std::find(p.begin(), p.end(), Row{"weights", 40 * MiB, 1, 40 * MiB}) != p.end());
  }
}

TEST_CASE("categories: a bad rules file names its line") {
  const auto error = [](const std::string& text) {
    CategoryRules rules;
    try {
      rules.add_user_rules(text);
    } catch (const CategoryRulesError& e) {
      CHECK(rules.user_rules() == 0);  // nothing of a bad file is kept
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("ok  a\nlonely\n") == "line 2: category 'lonely' has no regex");
  CHECK(error("# c\nok  a\n\nkv  (unclosed\n").starts_with("line 4: not a regular expression: '(unclosed': "));
  CHECK(error("we!ghts  foo\n") ==
        "line 1: a category is one word of letters, digits, '_', '.' or '-', then blanks, then a regex");
  CHECK(error("a  (x)\\1\n").starts_with("line 1: not a regular expression: '(x)\\1': back-references"));
  CHECK(error("  # only a comment\n\n") == "no error");
}

TEST_CASE("report --categories: a bad file is a usage error (status 2) naming the line and a good one is used") {
  test::TempDir dir;
  const std::string trace = dir.path + "/t.trace", bad = dir.path + "/bad.rules", good = dir.path + "/good.rules";
  cat_step(12).write(trace);
  std::ofstream(bad) << "model_weights  /home/u/model\\.py\nbroken\n";
  std::ofstream(good) << "model_weights  /home/u/model\\.py:build_model$\n";
  const auto failed = test::shell(test::kCli + " report --categories " + bad + " " + trace + " 2>&1");
  CHECK(failed.status == 2);
  CHECK(failed.out == "cumemtrace report: --categories " + bad + ": line 2: category 'broken' has no regex\n");
  const auto missing = test::shell(test::kCli + " report --categories " + dir.path + "/none " + trace + " 2>&1");
  CHECK(missing.status == 2);
  const auto ok = test::shell(test::kCli + " report --json --categories " + good + " " + trace);
  CHECK(ok.status == 0);
  CHECK(ok.out.find("\"category\": \"model_weights\",\n") != std::string::npos);
  CHECK(ok.out.find("\"user_rules\": 1") != std::string::npos);
  const auto by = test::shell(test::kCli + " report --by category " + trace);
  CHECK(by.status == 0);
  CHECK(by.out.find("    weights           40.00 MiB (41,943,040 B) in 1 allocation (1 segment: category inferred") !=
        std::string::npos);
  CHECK(test::shell(test::kCli + " report --by size " + trace + " 2>/dev/null").status == 2);
}

TEST_CASE("categories: JAX and CuPy by their allocator, the pools' memory from NVML's split") {
  TraceBuilder b;
  b.process().device(0, 80 * GiB);
  b.module(0, 0xc00000, 0xc10000, "/usr/lib/python3/dist-packages/jaxlib/xla_extension.so");
  b.module(0, 0xd00000, 0xd10000, "/usr/lib/python3/dist-packages/cupy/cuda/memory.cpython-311-x86_64-linux-gnu.so");
  b.symbol(0xc00000, "tsl::BFCAllocator::AllocateRawInternal(unsigned long, unsigned long, bool, unsigned long)", "",
           0);
  b.symbol(0xd00000, "__pyx_f_4cupy_4cuda_6memory_10SingleDeviceMemoryPool_malloc", "", 0);
  b.stack(11, 0, 0xc00000).stack(12, 0, 0xd00000);
  // XLA's pool 1024 MiB, CuPy's pool 64 MiB, then 8 MiB from a stream-ordered pool by CuPy
  // (one tensor, no segment): the peak, 1096 MiB. NVML then: 1154 MiB = 1096 tracked + 16
  // of the async pool's 24 MiB reserve beyond its 8 MiB live + 32 of the graph pool + 10.
  b.alloc(1 * ms, 0x100000000, 1024 * MiB, 11).alloc(2 * ms, 0x200000000, 64 * MiB, 12);
  b.alloc(3 * ms, 0x300000000, 8 * MiB, 12, 0, fmt::Kind::kAsyncPool);
  b.snapshot(3 * ms + 1000, fmt::SnapshotReason::kPeak,
             {TraceBuilder::Dev{0, 1096 * MiB, 1096 * MiB, 1154 * MiB, GiB, 80 * GiB, 24 * MiB, 8 * MiB,
                                fmt::kMomentSame, 32 * MiB}});
  b.alloc(4 * ms, 0xa0000, 4 * MiB, 12, -1, fmt::Kind::kHostPinned);  // the host row: no categories
  // The same with an exit snapshot of one moment seeing the end's 1096 MiB: NVML 1180 MiB =
  // 1096 + 32 of a 40 MiB async reserve beyond 8 live + 32 of the graph pool + 20.
  TraceBuilder with_exit = b;
  with_exit.snapshot(9 * ms, fmt::SnapshotReason::kExit,
                     {TraceBuilder::Dev{0, 1096 * MiB, 1096 * MiB, 1180 * MiB, GiB, 80 * GiB, 40 * MiB, 8 * MiB,
                                        fmt::kMomentSame, 32 * MiB}});
  with_exit.end(10 * ms);
  b.end(10 * ms);
  const CategoryRules rules;
  const Report r = cat_report(b, rules);
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[0].device == -1);
  CHECK_FALSE(r.devices[0].categories_at_peak);
  const DeviceReport& d = r.devices[1];
  REQUIRE(d.categories_at_peak);
  CHECK(rows_of(*d.categories_at_peak) == std::vector<Row>{{"jax_xla", 1024 * MiB, 1, 1024 * MiB},
                                                           {"cupy", 72 * MiB, 2, 64 * MiB},
                                                           {"graph_memory_pool", 32 * MiB, -1, 0},
                                                           {"pool_slack", 16 * MiB, -1, 0},
                                                           {"untracked", 10 * MiB, -1, 0}});
  // At the end, without an exit snapshot, only the graph pool's last reading is known beyond.
  REQUIRE(d.categories_at_end);
  CHECK(rows_of(*d.categories_at_end) == std::vector<Row>{{"jax_xla", 1024 * MiB, 1, 1024 * MiB},
                                                          {"cupy", 72 * MiB, 2, 64 * MiB},
                                                          {"graph_memory_pool", 32 * MiB, -1, 0}});
  const Report x = cat_report(with_exit, rules);
  REQUIRE(x.devices.size() == 2);
  REQUIRE(x.devices[1].categories_at_end);
  CHECK(rows_of(*x.devices[1].categories_at_end) == std::vector<Row>{{"jax_xla", 1024 * MiB, 1, 1024 * MiB},
                                                                     {"cupy", 72 * MiB, 2, 64 * MiB},
                                                                     {"graph_memory_pool", 32 * MiB, -1, 0},
                                                                     {"pool_slack", 32 * MiB, -1, 0},
                                                                     {"untracked", 20 * MiB, -1, 0}});
  CHECK(test::text_of(r).find("    cupy               72.00 MiB (75,497,472 B) in 2 allocations (64.00 MiB of it in 1 "
                              "segment: category inferred from the stack that grew it)\n") != std::string::npos);
}

TEST_CASE("categories: docs/categories.md lists the default table as the code has it, in order") {
  const std::string docs = std::string(CUMEMTRACE_FAILING_TRACES) + "/../../../docs/categories.md";
  std::ifstream in(docs);
  REQUIRE(in);
  std::vector<std::pair<std::string, std::string>> listed;
  for (std::string line; std::getline(in, line);) {
    // "| 3 | `cublas_workspace` | `REGEX` | why |", with '|' in REGEX written "\|".
    if (line.size() < 4 || line[0] != '|' || line[2] < '1' || line[2] > '9') continue;
    const size_t c0 = line.find('`'), c1 = line.find('`', c0 + 1), r0 = line.find('`', c1 + 1);
    const size_t r1 = line.find("` |", r0 + 1);
    REQUIRE(r1 != std::string::npos);
    std::string regex = line.substr(r0 + 1, r1 - r0 - 1);
    for (size_t p; (p = regex.find("\\|")) != std::string::npos;) regex.replace(p, 2, "|");
    listed.emplace_back(line.substr(c0 + 1, c1 - c0 - 1), regex);
  }
  std::vector<std::pair<std::string, std::string>> code;
  const CategoryRules defaults;
  for (const auto& r : defaults.rules()) code.emplace_back(r.category, r.regex);
  CHECK(listed == code);
  CHECK(code.size() == 12);
}

namespace {

Frame cat_py(const std::string& file, const std::string& function) {
  Frame f;
  f.python = true;
  f.file = file;
  f.function = function;
  return f;
}

Frame cat_native(const std::string& module, const std::string& function) {
  Frame f;
  f.module = module;
  f.function = function;
  return f;
}

std::string category_of(const CategoryRules& rules, const std::vector<Frame>& frames) {
  const int r = rules.match(frames);
  return r < 0 ? std::string("(none)") : rules.rules()[size_t(r)].category;
}

}  // namespace

TEST_CASE("categories: each default rule on the frames it is for, and the table's order across frames") {
  const CategoryRules rules;
  const std::string t = kTorch;
  const Frame fwd = cat_py(t + "nn/modules/linear.py", "forward");
  const Frame call = cat_py(t + "nn/modules/module.py", "_call_impl");
  CHECK(category_of(rules, {cat_native("libcublasLt.so.13", "cublasLtMatmul"), fwd}) == "cublaslt_workspace");
  CHECK(category_of(rules, {cat_native("libtorch_cuda.so", "at::cuda::getCUDABlasLtWorkspace()"), fwd}) ==
        "cublaslt_workspace");
  CHECK(category_of(rules, {cat_native("libtorch_cuda.so", "at::cuda::(anonymous namespace)::getNewWorkspace()"),
                            fwd}) == "cublas_workspace");
  CHECK(category_of(rules, {cat_native("libcudnn_engines_precompiled.so.9", ""), call}) == "cudnn_workspace");
  CHECK(category_of(rules, {cat_native("libcufft.so.12", "cufftMakePlanMany"), fwd}) == "cufft_workspace");
  CHECK(category_of(rules, {cat_native("libnccl.so.2", "ncclCommInitRank"), fwd}) == "nccl");
  CHECK(category_of(rules, {cat_py("/tmp/torchinductor_u/ab/cab12.py", "call"), fwd}) == "compiled_graphs");
  CHECK(category_of(rules, {cat_py("/tmp/torchinductor_u/ab/cab12.py", "call"),
                            cat_py(t + "_inductor/select_algorithm.py", "benchmark_choices")}) == "autotune");
  CHECK(category_of(rules, {fwd, cat_py(t + "cuda/graphs.py", "make_graphed_callables")}) == "cuda_graph_pool");
  CHECK(category_of(rules, {cat_py(t + "optim/adamw.py", "_multi_tensor_adamw")}) == "optimizer");
  CHECK(category_of(
            rules,
            {cat_native("libtorch_cpu.so", "torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor>&&)"),
             cat_native("libtorch_cpu.so",
                        "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)")}) ==
        "gradients");
  // A forward recomputed under backward (activation checkpointing) is the backward pass's.
  CHECK(category_of(rules, {fwd, call, cat_py(t + "autograd/graph.py", "_engine_run_backward")}) == "gradients");
  CHECK(category_of(rules, {cat_py(t + "nn/modules/module.py", "convert"),
                            cat_py(t + "nn/modules/module.py", "_apply")}) == "weights");
  CHECK(category_of(rules, {cat_py(t + "nn/modules/linear.py", "__init__")}) == "weights");
  CHECK(category_of(rules, {cat_py("/usr/lib/python3/dist-packages/safetensors/torch.py", "load_file")}) == "weights");
  CHECK(category_of(rules, {fwd}) == "activations");
  CHECK(category_of(rules, {cat_py("/home/u/net.py", "forward")}) == "activations");
  // A native function named forward keeps its arguments in the text: not a Python forward.
  CHECK(category_of(rules, {cat_native("libmy.so", "Net::forward(int)")}) == "(none)");
  CHECK(category_of(rules, {cat_py(t + "nn/modules/module.py", "state_dict")}) == "(none)");
  CHECK(frame_text(fwd) == t + "nn/modules/linear.py:forward");
  CHECK(frame_text(cat_native("libnccl.so.2", "ncclMemAlloc")) == "libnccl.so.2:ncclMemAlloc");
}
