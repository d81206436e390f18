// `cumemtrace export` (analysis/export/): exact snapshots, timelines and folded stacks
// from hand-built traces, each value worked out below from the trace that the test writes.
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

using namespace cumemtrace;
using cumemtrace::test::read_file;
using cumemtrace::test::span_of;
using cumemtrace::test::TraceBuilder;
using cumemtrace::test::load_with_python;
using json = nlohmann::json;

namespace {

namespace fmt = cumemtrace::format;

std::string tmp_path(const std::string& name) { return "/tmp/cumemtrace_export_test_" + std::to_string(getpid()) + "_" + name; }

// A process with Python frames and a native stack through the interpreter:
//   node 1 main (python.c:10) <- node 2 _PyEval_EvalFrameDefault <- node 3 my_alloc (ext.c:20)
//   <- node 4 cudaMalloc in libcudart (the tracer's side: never a call site)
//   node 5 "other;alloc" (ext.c:30), called by main
// Python: frame 1 <module> (train.py:5, entry) <- frame 2 forward (train.py:42).
TraceBuilder python_process() {
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
void python_event(TraceBuilder& b, fmt::EventRecord e) {
  e.stack_id = 4;
  b.record(fmt::RecordType::kEvent, TraceBuilder::pod(e) + TraceBuilder::pod(fmt::EventPython{2}));
}

Trace read_back(const TraceBuilder& b) { return parse_trace(span_of(b.bytes()), "t.trace"); }

json frame(const std::string& file, int line, const std::string& name) {
  return {{"filename", file}, {"line", line}, {"name", name}};
}

// my_alloc, then the two Python frames in place of the evaluation loop, then main.
const json kStack = json::array({frame("ext.c", 20, "my_alloc"), frame("train.py", 42, "forward"),
                                 frame("train.py", 5, "<module>"), frame("python.c", 10, "main")});

json entry(const std::string& action, uint64_t addr, uint64_t size, uint64_t time_us, const json& frames) {
  return {{"action", action}, {"addr", addr}, {"size", size}, {"stream", 0}, {"time_us", time_us}, {"frames", frames}};
}

}  // namespace

TEST_CASE("memviz: a protocol-4 pickle with the end state as segments and every event as PyTorch names it") {
  TraceBuilder b = python_process();
  const uint64_t A = 0x7f0000000000, B = 0x7f0000200000, C = 0x7f0000400000;
  python_event(b, TraceBuilder::ev(1000, fmt::Op::kAlloc, fmt::Kind::kDevice, A, 1 << 20, 0, 0, 1));
  b.alloc(2000, B, 3000);
  b.free(3000, A);
  b.free(3100, 0x1234);  // never allocated: nothing
  auto oom = TraceBuilder::ev(4000, fmt::Op::kAlloc, fmt::Kind::kDevice, 0, 8ull << 30, 0, 0, 1);
  oom.result = 2;
  python_event(b, oom);
  b.snapshot(4500, fmt::SnapshotReason::kFailedAllocation, {{.device = 0, .nvml_free = 5000}});
  b.alloc(5000, C, 512, 0, 1);
  auto graph = TraceBuilder::ev(5500, fmt::Op::kAlloc, fmt::Kind::kDevice, 0x7f0000600000, 4096, 0, 0, 1);
  graph.flags = fmt::kEventCaptured;  // a graph memory node: holds nothing
  b.event(graph);
  b.end(6000);
  const Trace t = read_back(b);
  REQUIRE_FALSE(t.error);

  const std::string path = tmp_path("snap.pickle");
  {
    std::ofstream out(path, std::ios::binary);
    const MemvizCounts c = write_memviz(out, t);
    CHECK(c.events == 10);
    CHECK(c.segments == 2);
  }
  const json got = load_with_python(path);
  std::remove(path.c_str());

  CHECK(got["first_bytes"] == json::array({0x80, 4}));
  // Only opcodes MemoryViz.js's unpickler knows (formats-and-conventions.md §1.6).
  const std::set<std::string> known = {"PROTO", "FRAME", "EMPTY_DICT", "EMPTY_LIST", "MARK", "SETITEMS", "APPENDS",
                                       "BININT", "BININT1", "BININT2", "LONG1", "SHORT_BINUNICODE", "BINUNICODE",
                                       "NEWFALSE", "MEMOIZE", "BINGET", "STOP"};
  for (const auto& op : got["opcodes"]) CHECK(known.count(op.get<std::string>()) == 1);
  CHECK(got["frames"] == 1);
  // The viewer's history view, undone from the end state: no block ever outside a segment.
  CHECK(got["history_errors"] == json::array());

  // Wall clock at the trace's start (TraceBuilder) in µs, plus the event's offset.
  const uint64_t R = 1'764'000'000'000'000ull;
  const json& snap = got["snapshot"];
  const json no_frames = json::array();
  const json d0 = json::array({entry("segment_alloc", A, 1 << 20, R + 1, kStack), entry("alloc", A, 1 << 20, R + 1, kStack),
                               entry("segment_alloc", B, 3000, R + 2, no_frames), entry("alloc", B, 3000, R + 2, no_frames),
                               entry("free_requested", A, 1 << 20, R + 3, no_frames),
                               entry("free_completed", A, 1 << 20, R + 3, no_frames),
                               entry("segment_free", A, 1 << 20, R + 3, no_frames),
                               {{"action", "oom"}, {"device_free", 5000}, {"size", 8ull << 30}, {"stream", 0},
                                {"time_us", R + 4}, {"frames", kStack}}});
  const json d1 = json::array({entry("segment_alloc", C, 512, R + 5, no_frames), entry("alloc", C, 512, R + 5, no_frames)});
  REQUIRE(snap["device_traces"].size() == 2);
  CHECK(snap["device_traces"][0] == d0);
  CHECK(snap["device_traces"][1] == d1);

  const auto segment = [](int device, uint64_t address, uint64_t size) {
    json block = {{"address", address}, {"size", size}, {"requested_size", size}, {"state", "active_allocated"},
                  {"frames", json::array()}};
    return json{{"device", device}, {"address", address}, {"total_size", size}, {"allocated_size", size},
                {"active_size", size}, {"requested_size", size}, {"stream", 0}, {"segment_type", "large"},
                {"is_expandable", false}, {"frames", json::array()}, {"blocks", json::array({block})}};
  };
  CHECK(snap["segments"] == json::array({segment(0, B, 3000), segment(1, C, 512)}));
  // No block outside its segment (the viewer's history view goes blank otherwise).
  for (const auto& s : snap["segments"]) {
    uint64_t at = s["address"];
    for (const auto& blk : s["blocks"]) at += blk["size"].get<uint64_t>();
    CHECK(at == s["address"].get<uint64_t>() + s["total_size"].get<uint64_t>());
  }
}

TEST_CASE("memviz: a snapshot over 64 KiB is cut into frames that the pure-Python unpickler accepts") {
  TraceBuilder b = python_process();
  b.batch();
  // 3000 allocations and frees, each 5 entries of about 100 bytes: some 1.5 MB of pickle.
  for (uint64_t i = 0; i < 3000; ++i) {
    python_event(b, TraceBuilder::ev(1000 + 2 * i, fmt::Op::kAlloc, fmt::Kind::kDevice, 0x7f0000000000 + i * 4096, 4096 + i, 0, 0, 1));
    b.free(1001 + 2 * i, 0x7f0000000000 + i * 4096);
  }
  b.seal();
  const Trace t = read_back(b);
  REQUIRE_FALSE(t.error);
  const std::string path = tmp_path("big.pickle");
  {
    std::ofstream out(path, std::ios::binary);
    write_memviz(out, t);
  }
  const json got = load_with_python(path);
  const std::string bytes = read_file(path);
  std::remove(path.c_str());
  // Each frame holds 64 KiB and at most one opcode more.
  CHECK(got["frames"].get<int>() >= int(bytes.size() / (66 * 1024)));
  CHECK(got["frames"].get<int>() >= 2);
  const json& d0 = got["snapshot"]["device_traces"][0];
  REQUIRE(d0.size() == 15000);
  CHECK(d0[14995]["action"] == "segment_alloc");
  CHECK(d0[14995]["size"] == 4096 + 2999);
  CHECK(d0[14995]["frames"] == kStack);
  CHECK(got["snapshot"]["segments"] == json::array());
  CHECK(got["history_errors"] == json::array());
}

namespace {

// Device 0 and 1 of one process; what the chrome export of it must hold, in file order.
TraceBuilder chrome_trace() {
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

}  // namespace

TEST_CASE("chrome: counters per device in bytes, failed allocations and marks as instant events") {
  const Trace t = read_back(chrome_trace());
  REQUIRE_FALSE(t.error);
  std::ostringstream out;
  CHECK(write_chrome(out, {&t}) == 11);
  const json got = json::parse(out.str());
  const json stack = json::array({"my_alloc [python3.12]", "forward (train.py:42)", "<module> (train.py:5)",
                                  "main [python3.12]"});
  const json want = json::array({
      {{"name", "process_name"}, {"ph", "M"}, {"pid", 1000}, {"args", {{"name", "GPU 0 (NVIDIA H200), pid 4242, rank 0"}}}},
      {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", 1000}, {"args", {{"sort_index", 1000}}}},
      {{"name", "process_name"}, {"ph", "M"}, {"pid", 1001}, {"args", {{"name", "GPU 1 (NVIDIA H200), pid 4242, rank 0"}}}},
      {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", 1001}, {"args", {{"sort_index", 1001}}}},
      {{"ts", 1000001.0}, {"name", "memory"}, {"ph", "C"}, {"pid", 1000}, {"args", {{"tracked_bytes", 1000}}}},
      {{"ts", 1000002.0}, {"name", "memory"}, {"ph", "C"}, {"pid", 1001}, {"args", {{"tracked_bytes", 500}}}},
      {{"ts", 1000002.5}, {"name", "failed allocation"}, {"ph", "i"}, {"s", "p"}, {"pid", 1000},
       {"args", {{"size", 4096}, {"result", 2}, {"api", "cudaMalloc"}, {"stack", stack}}}},
      {{"ts", 1000003.0}, {"name", "memory"}, {"ph", "C"}, {"pid", 1000}, {"args", {{"tracked_bytes", 0}}}},
      {{"ts", 1000003.5}, {"name", "nvml"}, {"ph", "C"}, {"pid", 1000}, {"args", {{"process_used_bytes", 123456}}}},
      {{"ts", 1000002.2}, {"name", "step 1"}, {"ph", "i"}, {"s", "p"}, {"pid", 1000}, {"args", {{"tid", 1}, {"source", "api"}}}},
      {{"ts", 1000002.2}, {"name", "step 1"}, {"ph", "i"}, {"s", "p"}, {"pid", 1001}, {"args", {{"tid", 1}, {"source", "api"}}}},
  });
  CHECK(got == want);
  // ts to the nanosecond, as written (not a double's rendering).
  CHECK(out.str().find("{\"ts\":1000002.200,") != std::string::npos);
}

TEST_CASE("chrome: a file cut after any record is the bare array that viewers load, minus the records cut off") {
  const Trace t = read_back(chrome_trace());
  std::ostringstream out;
  write_chrome(out, {&t});
  const std::string whole = out.str();
  REQUIRE(whole.rfind("[\n", 0) == 0);
  // Cut at each line end (one record per line): what a killed writer leaves. A viewer
  // drops the trailing comma and supplies the missing ']' (formats-and-conventions.md §2.1).
  size_t records = 0;
  for (size_t cut = whole.find('\n'); cut != std::string::npos && cut + 2 < whole.size(); cut = whole.find('\n', cut + 1)) {
    std::string part = whole.substr(0, cut);
    if (part.back() == ',') part.pop_back();
    const json got = json::parse(part + "]");
    CHECK(got.size() == records);
    ++records;
  }
  CHECK(records == 12);  // "[" and 11 records
}

TEST_CASE("chrome: several traces get one synthetic process per process and device") {
  TraceBuilder a;
  a.process(2ull << 20, {"prog"}, 0).device(0, 1ull << 30).alloc(100, 0x1000, 64);
  TraceBuilder b;
  b.process(2ull << 20, {"prog"}, 1).device(0, 1ull << 30).alloc(200, 0x1000, 32);
  const Trace ta = read_back(a), tb = read_back(b);
  std::ostringstream out;
  CHECK(write_chrome(out, {&ta, &tb}) == 6);
  const json got = json::parse(out.str());
  CHECK(got[0]["args"]["name"] == "GPU 0 (NVIDIA H200), pid 4242, rank 0");
  CHECK(got[2] == json{{"ts", 1000000.1}, {"name", "memory"}, {"ph", "C"}, {"pid", 1000}, {"args", {{"tracked_bytes", 64}}}});
  CHECK(got[3]["args"]["name"] == "GPU 0 (NVIDIA H200), pid 4242, rank 1");
  CHECK(got[3]["pid"] == 1001);
  CHECK(got[5] == json{{"ts", 1000000.2}, {"name", "memory"}, {"ph", "C"}, {"pid", 1001}, {"args", {{"tracked_bytes", 32}}}});

  // The same file from the traces read in passes, one at a time, as the command reads
  // files over 32 MiB: their events come from scans of the bytes, not from the Traces.
  const TraceFile fa(span_of(a.bytes()), "a.trace", /*hold_bytes=*/0), fb(span_of(b.bytes()), "b.trace", 0);
  REQUIRE_FALSE(fa.holds_events());
  std::ostringstream passes;
  ChromeWriter w(passes);
  w.add(fa.trace(), fa.events());
  w.add(fb.trace(), fb.events());
  CHECK(w.close() == 6);
  CHECK(passes.str() == out.str());
}

namespace {

// Stack 4 (my_alloc, with Python frames) and stack 5 (other;alloc) on device 0:
//   t=1000 a1 1000 B (4)   t=2000 a2 2000 B (5)   t=3000 a3 500 B (4): peak 3500 B
//   t=4000 a2 freed        t=5000 a4 100 B, no stack
// plus managed and pinned memory, which are not device bytes.
TraceBuilder folded_trace() {
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

const std::string kMine = "cuda:0;main [python3.12];<module> (train.py:5);forward (train.py:42);my_alloc [python3.12]";
const std::string kOther = "cuda:0;main [python3.12];other,alloc [python3.12]";

// `t` is folded_trace() read back. Both ways a command reads it: held whole, and with its
// events read again from the bytes (TraceFile, a file over 32 MiB); they must agree. The
// first is returned.
std::string folded_at(const Trace& t, uint64_t at) {
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

}  // namespace

TEST_CASE("folded: live bytes by stack, root first, at the peak, at the end and at a moment") {
  const Trace t = read_back(folded_trace());
  REQUIRE_FALSE(t.error);
  const uint64_t peak = TraceBuilder::kStart + 3000, end = TraceBuilder::kStart + 6000;
  CHECK(folded_at(t, peak) == kMine + " 1500\n" + kOther + " 2000\n");
  CHECK(folded_at(t, end) == "cuda:0;[no stack] 100\n" + kMine + " 1500\n");
  CHECK(folded_at(t, TraceBuilder::kStart + 1500) == kMine + " 1000\n");
  // The same bytes as `cumemtrace live` counts on the device.
  const auto device0_bytes = [&](uint64_t at) {
    for (const auto& d : build_live(t, at).devices)
      if (d.device == 0) return d.device_bytes;
    return ~uint64_t(0);
  };
  CHECK(device0_bytes(peak) == 3500);
  CHECK(device0_bytes(end) == 1600);
}

TEST_CASE("export command: a trace over 32 MiB, read in passes, gives the same folded, chrome and jsonl rows") {
  // folded_trace() then 33 MiB without a seal (a writer cut off mid-flush, or damage):
  // the file is over TraceFile::kHoldBytes, so the command reads it in passes.
  const std::string small = tmp_path("small.trace"), big = tmp_path("big.trace");
  folded_trace().write(small);
  folded_trace().write(big);
  {
    std::ofstream tail(big, std::ios::binary | std::ios::app);
    const std::string block(1 << 20, '\xA5');
    for (int i = 0; i < 33; ++i) tail << block;
  }
  const std::string cli = std::string(CUMEMTRACE_CLI) + " export ";
  for (const char* args : {"--format folded", "--format folded --at end", "--format folded --at 1000001500",
                           "--format chrome"}) {
    INFO(args);
    const auto a = test::shell(cli + args + " " + small + " 2>/dev/null");
    const auto b = test::shell(cli + args + " " + big + " 2>/dev/null");
    CHECK(a.status == 0);
    CHECK(b.status == 0);  // damaged, not unreadable
    CHECK(b.out == a.out);
  }
  // Two traces, one of them read in passes: the process is the root.
  CHECK(test::shell(cli + "--format folded --at end " + small + " " + big + " 2>/dev/null").out ==
        "rank 0;cuda:0;[no stack] 200\nrank 0;" + kMine + " 3000\n");
  const std::string da = tmp_path("tables_small"), db = tmp_path("tables_big");
  CHECK(test::shell(cli + "--format jsonl -o " + da + " " + small + " 2>/dev/null").status == 0);
  CHECK(test::shell(cli + "--format jsonl -o " + db + " " + big + " 2>/dev/null").status == 0);
  for (const char* name : {"devices", "events", "snapshots", "marks", "frames"}) {
    INFO(name);
    CHECK(read_file(db + "/" + name + ".jsonl") == read_file(da + "/" + name + ".jsonl"));
  }
  CHECK(json::parse(read_file(db + "/processes.jsonl"))["damaged_ranges"] == 1);
  test::shell("rm -r " + da + " " + db);
  std::remove(small.c_str());
  std::remove(big.c_str());
}

TEST_CASE("export command: --at peak, end and ns for folded, and usage errors") {
  // `copy`: a second file of the same bytes (one file named twice is one trace, as for report).
  const std::string path = tmp_path("folded.trace"), copy = tmp_path("folded-copy.trace");
  folded_trace().write(path);
  folded_trace().write(copy);
  const std::string cli = std::string(CUMEMTRACE_CLI) + " export ";
  auto r = test::shell(cli + "--format folded " + path + " 2>/dev/null");
  CHECK(r.status == 0);
  CHECK(r.out == kMine + " 1500\n" + kOther + " 2000\n");  // peak is the default
  r = test::shell(cli + "--format folded --at end " + path + " 2>/dev/null");
  CHECK(r.out == "cuda:0;[no stack] 100\n" + kMine + " 1500\n");
  r = test::shell(cli + "--format folded --at 1000001500 " + path + " 2>/dev/null");
  CHECK(r.out == kMine + " 1000\n");
  // Two traces: the process is the root.
  r = test::shell(cli + "--format folded --at end " + path + " " + copy + " 2>/dev/null");
  CHECK(r.out == "rank 0;cuda:0;[no stack] 200\nrank 0;" + kMine + " 3000\n");

  const std::string out = tmp_path("cli.pickle");
  r = test::shell(cli + "--format memviz " + path + " -o " + out + " 2>/dev/null");
  CHECK(r.status == 0);
  CHECK(read_file(out).substr(0, 3) == "\x80\x04\x95");
  std::remove(out.c_str());

  CHECK(test::shell(cli + "--format memviz " + path + " " + copy + " 2>/dev/null").status == 2);
  CHECK(test::shell(cli + "--format chrome --at end " + path + " 2>/dev/null").status == 2);
  CHECK(test::shell(cli + "--format svg " + path + " 2>/dev/null").status == 2);
  CHECK(test::shell(cli + "--format folded --at never " + path + " 2>/dev/null").status == 2);
  CHECK(test::shell(cli + "--format jsonl " + path + " 2>/dev/null").status == 2);  // needs -o DIR
  CHECK(test::shell(cli + "--format folded --zstd " + path + " 2>/dev/null").status == 2);
  const std::string tables = tmp_path("cli_tables");  // made by the command
  CHECK(test::shell(cli + "--format jsonl --zstd " + path + " -o " + tables + " 2>/dev/null").status == 0);
  CHECK(test::shell("LC_ALL=C ls " + tables).out ==
        "devices.jsonl.zst\nevents.jsonl.zst\nframes.jsonl.zst\nmarks.jsonl.zst\nprocesses.jsonl.zst\nsnapshots.jsonl.zst\n");
  test::shell("rm -r " + tables);
  std::remove(path.c_str());
  std::remove(copy.c_str());
}

TEST_CASE("export and html output files: a symlink is refused not followed, an input is never overwritten, 0600") {
  const std::string path = tmp_path("out.trace"), victim = tmp_path("victim"), link = tmp_path("link.txt");
  const std::string mine = tmp_path("mine.txt");
  folded_trace().write(path);
  const std::string cli = std::string(CUMEMTRACE_CLI) + " export ";
  REQUIRE(test::shell("printf keep > " + victim + " && ln -sf " + victim + " " + link).status == 0);
  auto r = test::shell(cli + "--format folded " + path + " -o " + link + " 2>&1");
  CHECK(r.status == 1);
  CHECK(read_file(victim) == "keep");  // the link's target is untouched ...
  CHECK(test::shell("test -L " + link).status == 0);  // ... and the link left as it was
  r = test::shell(cli + "--format folded " + path + " -o " + mine + " 2>&1");
  CHECK(r.status == 0);
  CHECK(read_file(mine) == kMine + " 1500\n" + kOther + " 2000\n");
  CHECK(test::shell("stat -c %a " + mine).out == "600\n");
  // The success line comes after the file is in place.
  CHECK(r.out == "cumemtrace export: 3500 live bytes to " + mine + "\n");

  // The trace itself as the output, however spelt: refused, the trace unchanged.
  const std::string before = read_file(path);
  const std::string dir = path.substr(0, path.rfind('/')), base = path.substr(path.rfind('/') + 1);
  CHECK(test::shell(cli + "--format chrome " + path + " -o " + dir + "/./" + base + " 2>/dev/null").status == 2);
  CHECK(test::shell(std::string(CUMEMTRACE_CLI) + " html " + path + " -o " + path + " 2>/dev/null").status == 2);
  CHECK(read_file(path) == before);
  // A directory that cannot take the file: an error and no success line.
  r = test::shell(cli + "--format chrome " + path + " -o /proc/cumemtrace-no/x.json 2>&1");
  CHECK(r.status == 1);
  CHECK(r.out.find("trace events to") == std::string::npos);
  // A device at the name: written through, the device kept (renaming onto it had replaced
  // /dev/null itself when run as root); through a symlink: refused, as any link; a failed
  // write is an error; a directory is refused.
  const std::string to_null = tmp_path("null-link"), to_full = tmp_path("full-link"), a_dir = tmp_path("a-dir");
  REQUIRE(test::shell("ln -sf /dev/null " + to_null + " && ln -sf /dev/full " + to_full + " && mkdir -p " + a_dir).status == 0);
  CHECK(test::shell(cli + "--format folded " + path + " -o /dev/null >/dev/null 2>&1").status == 0);
  CHECK(test::shell("test -c /dev/null").status == 0);
  CHECK(test::shell(cli + "--format folded " + path + " -o " + to_null + " >/dev/null 2>&1").status == 1);
  r = test::shell(cli + "--format folded " + path + " -o /dev/full 2>&1");
  CHECK(r.status == 1);
  CHECK(r.out == "cumemtrace export: writing /dev/full failed\n");
  CHECK(test::shell(cli + "--format folded " + path + " -o " + to_full + " >/dev/null 2>&1").status == 1);
  CHECK(test::shell("test -L " + to_full).status == 0);
  r = test::shell(cli + "--format folded " + path + " -o " + a_dir + " 2>&1");
  CHECK(r.status == 1);
  CHECK(r.out == "cumemtrace export: " + a_dir + " is a directory\n");
  test::shell("rm -rf " + to_null + " " + to_full + " " + a_dir);
  // An empty --at is an error, not the peak.
  CHECK(test::shell(cli + "--format folded --at '' " + path + " 2>/dev/null").status == 2);

  // Of several traces, one without device memory is left out of the peak's flame graph.
  const std::string empty = tmp_path("empty.trace");
  TraceBuilder e;
  e.process().device(0, 80ull << 30);
  e.write(empty);
  r = test::shell(cli + "--format folded " + path + " " + empty + " 2>/dev/null");
  CHECK(r.status == 0);
  CHECK(r.out == kMine + " 1500\n" + kOther + " 2000\n");
  CHECK(test::shell(cli + "--format folded " + empty + " 2>/dev/null").status == 2);  // alone: nothing to draw
  for (const auto& f : {path, victim, link, empty, mine}) std::remove(f.c_str());
}

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("jsonl: one row per process, device, event, snapshot entry, mark and stack frame, plain or zstd") {
  const Trace t = read_back(chrome_trace());
  const std::string dir = tmp_path("tables");
  const std::string zdir = tmp_path("tables_zst");
  REQUIRE(test::shell("mkdir -p " + dir + " " + zdir).status == 0);
  const JsonlCounts c = write_jsonl(dir, {&t}, false);
  CHECK(c.files == 6);
  CHECK(c.rows == 1 + 2 + 4 + 2 + 1 + 4);

  const auto table = [&](const std::string& name) { return lines_of(read_file(dir + "/" + name + ".jsonl")); };
  const auto processes = table("processes");
  REQUIRE(processes.size() == 1);
  const json p = json::parse(processes[0]);
  CHECK(p["pid"] == 4242);
  CHECK(p["rank"] == 0);
  CHECK(p["argv"] == json::array({"prog", "--flag"}));
  CHECK(p["start_monotonic_ns"] == TraceBuilder::kStart);
  CHECK(p["clean_end"] == false);

  const auto devices = table("devices");
  REQUIRE(devices.size() == 2);
  CHECK(devices[1] == R"({"process":0,"device":1,"nvml_index":1,"total_bytes":85899345920,)"
                      R"("uuid":"GPU-00000000-0000-0000-0000-000000000000","name":"NVIDIA H200"})");

  const auto events = table("events");
  REQUIRE(events.size() == 4);
  CHECK(events[2] == R"({"process":0,"seq":2,"time_ns":1000002500,"op":"alloc","kind":"device","api":"cudaMalloc",)"
                     R"("device":0,"address":0,"size":4096,"stream":0,"handle":0,"tid":7,"result":2,"flags":0,)"
                     R"("stack_id":4,"python_stack_id":2})");
  CHECK(json::parse(events[3])["op"] == "free");

  const auto snapshots = table("snapshots");
  REQUIRE(snapshots.size() == 2);
  const json s0 = json::parse(snapshots[0]);
  CHECK(s0["time_ns"] == 1000003500);
  CHECK(s0["reason"] == "periodic");
  CHECK(s0["nvml_process_used"] == 123456);
  CHECK(s0["nvml_device_free"] == nullptr);  // not measured
  CHECK(json::parse(snapshots[1])["device"] == 1);

  CHECK(table("marks") == std::vector<std::string>{
                              R"({"process":0,"time_ns":1000002200,"tid":1,"source":"api","name":"step 1"})"});

  const auto frames = table("frames");
  REQUIRE(frames.size() == 4);  // the failed allocation's stack, merged: the only stack named
  CHECK(frames[1] == R"({"process":0,"stack_id":4,"python_stack_id":2,"depth":1,"python":true,"function":"forward",)"
                     R"x("file":"train.py","line":42,"module":"","ip":0,"label":"forward (train.py:42)"})x");
  CHECK(json::parse(frames[3])["label"] == "main [python3.12]");

  // The same bytes, zstd-compressed, one frame per file.
  write_jsonl(zdir, {&t}, true);
  for (const char* name : {"processes", "devices", "events", "snapshots", "marks", "frames"}) {
    INFO(name);
    const std::string plain = read_file(dir + "/" + name + ".jsonl");
    const std::string packed = read_file(zdir + "/" + name + ".jsonl.zst");
    std::string back(plain.size() + 16, '\0');
    const size_t n = ZSTD_decompress(back.data(), back.size(), packed.data(), packed.size());
    REQUIRE_FALSE(ZSTD_isError(n));
    back.resize(n);
    CHECK(back == plain);
  }

  // The same rows from the trace read in passes (a file larger than TraceFile holds, as
  // the command reads it): its events come from a scan of the file, not from the Trace.
  const std::string pdir = tmp_path("tables_passes");
  REQUIRE(test::shell("mkdir -p " + pdir).status == 0);
  const TraceBuilder b = chrome_trace();
  const TraceFile file(span_of(b.bytes()), "t.trace", /*hold_bytes=*/0);
  REQUIRE_FALSE(file.holds_events());
  REQUIRE(file.trace().events.empty());
  JsonlTables tables(pdir, {"t.trace"}, false);
  tables.add(file.trace(), file.events());
  CHECK(tables.close().rows == c.rows);
  CHECK_FALSE(file.changed());
  for (const char* name : {"processes", "devices", "events", "snapshots", "marks", "frames"}) {
    INFO(name);
    CHECK(read_file(pdir + "/" + name + ".jsonl") == read_file(dir + "/" + name + ".jsonl"));
  }
  test::shell("rm -r " + dir + " " + zdir + " " + pdir);
}

TEST_CASE("jsonl and memviz: bytes of the trace that are not UTF-8 are escaped as report escapes them, not refused") {
  // A command line and a symbol's file name as a process may have them (Latin-1, damage).
  TraceBuilder b;
  b.process(2ull << 20, {"caf\xe9", "--flag"}).device(0, 80ull << 30);
  b.api(1, "cudaMalloc");
  b.module(0, 0x400000, 0x500000, "/usr/bin/prog");
  b.stack(1, 0, 0x400100);
  b.symbol(0x400100, "main", "li\xff" "c-start.c", 10);
  auto e = TraceBuilder::ev(1000, fmt::Op::kAlloc, fmt::Kind::kDevice, 0x7f0000000000, 4096, 0, 0, 1);
  e.stack_id = 1;
  b.event(e).end(2000);
  const Trace t = read_back(b);
  REQUIRE_FALSE(t.error);

  const std::string dir = tmp_path("tables_latin1");
  REQUIRE(test::shell("mkdir -p " + dir).status == 0);
  write_jsonl(dir, {&t}, false);
  const auto processes = lines_of(read_file(dir + "/processes.jsonl"));
  REQUIRE(processes.size() == 1);
  CHECK(json::parse(processes[0])["argv"] == json::array({"caf\\xe9", "--flag"}));

  const std::string path = tmp_path("latin1.pickle");
  {
    std::ofstream out(path, std::ios::binary);
    write_memviz(out, t);
  }
  const json got = load_with_python(path);  // Python's pickle.load: refused invalid UTF-8 before
  std::remove(path.c_str());
  CHECK(got["first_bytes"] == json::array({0x80, 4}));
  CHECK(got.dump().find("li\\\\xffc-start.c") != std::string::npos);
}

namespace {

// Names in `dir` that contain ".tmp.".
std::vector<std::string> temporaries_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d))
      if (std::string(e->d_name).find(".tmp.") != std::string::npos) out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

}  // namespace

TEST_CASE("export: SIGTERM or SIGINT while the tables are written leaves no temporaries, and ends the CLI by it") {
  TraceBuilder b;
  b.process().device(0, 80ull << 30);
  for (uint64_t i = 0; i < 300000; ++i) b.alloc(10 * i, 0x100000 + 4096 * i, 4096).free(10 * i + 5, 0x100000 + 4096 * i);
  b.end(10 * 300000);
  const std::string trace = tmp_path("signal.trace");
  b.write(trace);
  for (int sig : {SIGTERM, SIGINT}) {
    INFO("signal " << sig);
    const std::string dir = tmp_path("signal_tables");
    test::shell("rm -rf " + dir);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, 2);
      execl(CUMEMTRACE_CLI, CUMEMTRACE_CLI, "export", "--format", "jsonl", "-o", dir.c_str(), trace.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    // Wait (at most 60 s) for a table's temporary, then signal.
    bool seen = false;
    int status = 0;
    pid_t done = 0;
    for (int ms = 0; ms < 60000 && !seen && done == 0; ++ms) {
      seen = !temporaries_in(dir).empty();
      if (!seen) {
        usleep(1000);
        done = waitpid(pid, &status, WNOHANG);
      }
    }
    if (done == 0) {
      kill(pid, sig);
      REQUIRE(waitpid(pid, &status, 0) == pid);
    }
    if (!seen) {
      WARN("the export finished before a temporary was seen: nothing to check this time");
      continue;
    }
    CHECK(WIFSIGNALED(status));
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == sig);
    CHECK(temporaries_in(dir) == std::vector<std::string>{});
    test::shell("rm -rf " + dir);
  }
  std::remove(trace.c_str());
}
