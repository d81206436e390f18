// The export formats: memviz (PyTorch's memory_viz pickle), Chrome/Perfetto counters and
// folded stacks, each against what the other tool reads (docs/formats.md).
#include "export_fixtures.h"

using namespace cumemtrace::test::exports;

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
  const std::set<std::string> known = {
      "PROTO",   "FRAME", "EMPTY_DICT",       "EMPTY_LIST", "MARK",     "SETITEMS", "APPENDS", "BININT", "BININT1",
      "BININT2", "LONG1", "SHORT_BINUNICODE", "BINUNICODE", "NEWFALSE", "MEMOIZE",  "BINGET",  "STOP"};
  for (const auto& op : got["opcodes"]) CHECK(known.count(op.get<std::string>()) == 1);
  CHECK(got["frames"] == 1);
  // The viewer's history view, undone from the end state: no block ever outside a segment.
  CHECK(got["history_errors"] == json::array());

  // Wall clock at the trace's start (TraceBuilder) in µs, plus the event's offset.
  const uint64_t R = 1'764'000'000'000'000ull;
  const json& snap = got["snapshot"];
  const json no_frames = json::array();
  const json d0 = json::array({entry("segment_alloc", A, 1 << 20, R + 1, kStack),
                               entry("alloc", A, 1 << 20, R + 1, kStack),
                               entry("segment_alloc", B, 3000, R + 2, no_frames),
                               entry("alloc", B, 3000, R + 2, no_frames),
                               entry("free_requested", A, 1 << 20, R + 3, no_frames),
                               entry("free_completed", A, 1 << 20, R + 3, no_frames),
                               entry("segment_free", A, 1 << 20, R + 3, no_frames),
                               {{"action", "oom"},
                                {"device_free", 5000},
                                {"size", 8ull << 30},
                                {"stream", 0},
                                {"time_us", R + 4},
                                {"frames", kStack}}});
  const json d1 =
      json::array({entry("segment_alloc", C, 512, R + 5, no_frames), entry("alloc", C, 512, R + 5, no_frames)});
  REQUIRE(snap["device_traces"].size() == 2);
  CHECK(snap["device_traces"][0] == d0);
  CHECK(snap["device_traces"][1] == d1);

  const auto segment = [](int device, uint64_t address, uint64_t size) {
    json block = {{"address", address},
                  {"size", size},
                  {"requested_size", size},
                  {"state", "active_allocated"},
                  {"frames", json::array()}};
    return json{{"device", device},
                {"address", address},
                {"total_size", size},
                {"allocated_size", size},
                {"active_size", size},
                {"requested_size", size},
                {"stream", 0},
                {"segment_type", "large"},
                {"is_expandable", false},
                {"frames", json::array()},
                {"blocks", json::array({block})}};
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
    python_event(b, TraceBuilder::ev(1000 + 2 * i, fmt::Op::kAlloc, fmt::Kind::kDevice, 0x7f0000000000 + i * 4096,
                                     4096 + i, 0, 0, 1));
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

TEST_CASE("chrome: counters per device in bytes, failed allocations and marks as instant events") {
  const Trace t = read_back(chrome_trace());
  REQUIRE_FALSE(t.error);
  std::ostringstream out;
  CHECK(write_chrome(out, {&t}) == 11);
  const json got = json::parse(out.str());
  const json stack =
      json::array({"my_alloc [python3.12]", "forward (train.py:42)", "<module> (train.py:5)", "main [python3.12]"});
  const json want = json::array({
      {{"name", "process_name"},
       {"ph", "M"},
       {"pid", 1000},
       {"args", {{"name", "GPU 0 (NVIDIA H200), pid 4242, rank 0"}}}},
      {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", 1000}, {"args", {{"sort_index", 1000}}}},
      {{"name", "process_name"},
       {"ph", "M"},
       {"pid", 1001},
       {"args", {{"name", "GPU 1 (NVIDIA H200), pid 4242, rank 0"}}}},
      {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", 1001}, {"args", {{"sort_index", 1001}}}},
      {{"ts", 1000001.0}, {"name", "memory"}, {"ph", "C"}, {"pid", 1000}, {"args", {{"tracked_bytes", 1000}}}},
      {{"ts", 1000002.0}, {"name", "memory"}, {"ph", "C"}, {"pid", 1001}, {"args", {{"tracked_bytes", 500}}}},
      {{"ts", 1000002.5},
       {"name", "failed allocation"},
       {"ph", "i"},
       {"s", "p"},
       {"pid", 1000},
       {"args", {{"size", 4096}, {"result", 2}, {"api", "cudaMalloc"}, {"stack", stack}}}},
      {{"ts", 1000003.0}, {"name", "memory"}, {"ph", "C"}, {"pid", 1000}, {"args", {{"tracked_bytes", 0}}}},
      {{"ts", 1000003.5}, {"name", "nvml"}, {"ph", "C"}, {"pid", 1000}, {"args", {{"process_used_bytes", 123456}}}},
      {{"ts", 1000002.2},
       {"name", "step 1"},
       {"ph", "i"},
       {"s", "p"},
       {"pid", 1000},
       {"args", {{"tid", 1}, {"source", "api"}}}},
      {{"ts", 1000002.2},
       {"name", "step 1"},
       {"ph", "i"},
       {"s", "p"},
       {"pid", 1001},
       {"args", {{"tid", 1}, {"source", "api"}}}},
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
  for (size_t cut = whole.find('\n'); cut != std::string::npos && cut + 2 < whole.size();
       cut = whole.find('\n', cut + 1)) {
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
  CHECK(got[2] ==
        json{{"ts", 1000000.1}, {"name", "memory"}, {"ph", "C"}, {"pid", 1000}, {"args", {{"tracked_bytes", 64}}}});
  CHECK(got[3]["args"]["name"] == "GPU 0 (NVIDIA H200), pid 4242, rank 1");
  CHECK(got[3]["pid"] == 1001);
  CHECK(got[5] ==
        json{{"ts", 1000000.2}, {"name", "memory"}, {"ph", "C"}, {"pid", 1001}, {"args", {{"tracked_bytes", 32}}}});

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
