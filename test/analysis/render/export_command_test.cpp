// The export command end to end: large traces read in passes, --at, usage errors, output
// files (never through a link, 0600), JSON lines, bytes that are not UTF-8, and signals
// while the tables are written.
#include "export_fixtures.h"

using namespace cumemtrace::test::exports;

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
  for (const char* args :
       {"--format folded", "--format folded --at end", "--format folded --at 1000001500", "--format chrome"}) {
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
        "devices.jsonl.zst\nevents.jsonl.zst\nframes.jsonl.zst\nmarks.jsonl.zst\nprocesses.jsonl.zst\nsnapshots.jsonl."
        "zst\n");
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
  CHECK(read_file(victim) == "keep");                 // the link's target is untouched ...
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
  REQUIRE(
      test::shell("ln -sf /dev/null " + to_null + " && ln -sf /dev/full " + to_full + " && mkdir -p " + a_dir).status ==
      0);
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

  CHECK(table("marks") ==
        std::vector<std::string>{R"({"process":0,"time_ns":1000002200,"tid":1,"source":"api","name":"step 1"})"});

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
  b.symbol(0x400100, "main",
           "li\xff"
           "c-start.c",
           10);
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

TEST_CASE("export: SIGTERM or SIGINT while the tables are written leaves no temporaries, and ends the CLI by it") {
  TraceBuilder b;
  b.process().device(0, 80ull << 30);
  for (uint64_t i = 0; i < 300000; ++i)
    b.alloc(10 * i, 0x100000 + 4096 * i, 4096).free(10 * i + 5, 0x100000 + 4096 * i);
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
