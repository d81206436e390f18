// A trace read in passes with a decoding thread of its own (read/event_source.h,
// FileEvents): every pass hands `each` the events one thread gives, in the same order, so
// every report is the same. Checked on every trace in the test data (the failing traces
// and the fuzz seeds) and on one of many batches.
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.h"
#include "parse_built.h"
#include "read/event_source.h"
#include "read/damage/trace_check.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "reports/report.h"
#include "temp_dir.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::TraceBuilder;

namespace {

// Everything one pass gives, field by field, with the index it came with.
std::vector<std::string> pass_fields(const TraceFile& file) {
  std::vector<std::string> out;
  file.events().scan([&](const Event& e, size_t i) {
    std::ostringstream s;
    s << i << ' ' << e.time_ns << ' ' << e.address << ' ' << e.size << ' ' << e.stream << ' ' << e.handle << ' '
      << e.tid << ' ' << e.device << ' ' << e.stack_id << ' ' << e.result << ' ' << e.api << ' ' << int(e.op) << ' '
      << int(e.kind) << ' ' << e.flags << ' ' << e.python_stack_id;
    out.push_back(s.str());
  });
  return out;
}

// What `report` would say of the trace at `path` read in passes on `threads` threads: its
// check's messages, then its JSON and text.
std::string threaded_report(const std::string& path, unsigned threads) {
  TraceFile file(path, /*hold_bytes=*/0, threads);
  std::ostringstream out;
  if (!check_trace(file.trace(), out)) return out.str();
  const Report rep = build_report(file.trace(), file.events(), ReportOptions{});
  out << to_json(rep).dump(1) << "\n";
  write_text(out, rep);
  out << (file.changed() ? "changed" : "unchanged");
  return out.str();
}

std::set<std::string> trace_files_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    if (f.path().extension() == ".trace") out.insert(f.path().string());
  return out;
}

}  // namespace

TEST_CASE("two threads: every trace in the test data reports as on one thread") {
  std::set<std::string> traces = trace_files_in(CUMEMTRACE_FAILING_TRACES);
  const std::set<std::string> seeds = trace_files_in(CUMEMTRACE_FUZZ_SEEDS);
  // The folders' traces today (a trace added there is covered once counted here).
  REQUIRE(traces.size() == 9);
  REQUIRE(seeds.size() == 12);
  traces.insert(seeds.begin(), seeds.end());
  for (const std::string& path : traces) {
    INFO(path);
    const TraceFile one(path, 0, 1), two(path, 0, 2);
    REQUIRE_FALSE(one.holds_events());
    CHECK(pass_fields(two) == pass_fields(one));
    CHECK(threaded_report(path, 2) == threaded_report(path, 1));
  }
}

TEST_CASE("two threads: a trace of 25 batches and more, the queue full, reads as on one thread") {
  // 60,000 allocations and 60,000 frees: 120,000 events, 29.3 batches of 4,096.
  TraceBuilder b;
  b.process().device(0, 1ull << 40);
  for (uint32_t s = 1; s <= 4; ++s) b.stack(s, 0, 0x401000 + 0x10 * s);
  for (uint64_t k = 0; k < 60000; ++k) {
    b.alloc(10 * k + 1, 0x7f0000000000 + 4096 * k, 512 + k % 7, uint32_t(1 + k % 4));
    b.free(10 * k + 5, 0x7f0000000000 + 4096 * k);
  }
  b.end(10 * 60000);
  cumemtrace::test::TempDir dir;
  const std::string path = dir.path + "/many.trace";
  b.write(path);
  const TraceFile one(path, 0, 1), two(path, 0, 2);
  REQUIRE(one.events().size() == 120000);
  const auto pass = pass_fields(two);
  CHECK(pass.size() == 120000);
  CHECK(pass == pass_fields(one));
  CHECK(threaded_report(path, 2) == threaded_report(path, 1));
}

TEST_CASE("two threads: what the replay throws reaches the caller, and the decoder stops") {
  TraceBuilder b;
  b.process().device(0, 1ull << 40);
  for (uint64_t k = 0; k < 20000; ++k) b.alloc(k + 1, 0x7f0000000000 + 4096 * k, 512);
  b.end(30000);
  const std::string bytes = b.bytes();
  const TraceFile two(cumemtrace::test::span_of(bytes), "t.trace", 0, 2);
  size_t seen = 0;
  CHECK_THROWS_AS(two.events().scan([&](const Event&, size_t i) {
    seen = i + 1;
    if (i == 5000) throw std::runtime_error("stop");
  }),
                  std::runtime_error);
  CHECK(seen == 5001);
  // The file reads whole again after that.
  size_t all = 0;
  two.events().scan([&](const Event&, size_t) { ++all; });
  CHECK(all == 20000);
}
