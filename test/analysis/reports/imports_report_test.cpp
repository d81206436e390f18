// Trace 1.9 in the analysis: an array is device memory at a handle, not in the address
// space; an ipc-import is another process's memory, listed apart and never in a peak; a
// share (kShare) is counted. Figures worked out by hand from the synthetic traces below.
#include <cstddef>
#include <sstream>

#include "catch.h"
#include "reports/job/job.h"
#include "reports/report.h"
#include "report_both.h"
#include "render/report_text.h"
#include "parse_built.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::parse;
using cumemtrace::test::report_both;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;
using fmt::Kind;
using fmt::Op;

namespace {

fmt::EventRecord import_of(uint64_t t, uint64_t address, uint64_t size, uint32_t exporter_pid) {
  auto e = TraceBuilder::ev(t, Op::kAlloc, Kind::kIpcImport, address, size, 0, 0, 3);
  e.handle = exporter_pid;
  return e;
}

// The exporter: 8 MiB of device memory at 0x7f0000000000, exported once.
TraceBuilder exporter() {
  TraceBuilder b;
  b.process().device(0, 80 * GiB).api(1, "cudaMalloc").api(2, "cudaFree").api(4, "cudaIpcGetMemHandle");
  b.alloc(10, 0x7f0000000000, 8 * MiB);
  b.event(TraceBuilder::ev(20, Op::kShare, Kind::kDevice, 0x7f0000000000, 8 * MiB, 0, 0, 4));
  return b.end(100);
}

// The importer: 2 MiB of its own, an import of 8 MiB from pid 4242 (open while a 12 MiB
// array is made: the peak), closed; then a 1 MiB import of unknown origin, left open.
TraceBuilder importer() {
  TraceBuilder b;
  b.process().device(0, 80 * GiB).api(1, "cudaMalloc").api(2, "cudaFree").api(3, "cudaIpcOpenMemHandle");
  b.alloc(10, 0x7f0000000000, 2 * MiB);
  b.event(import_of(20, 0x7f8000000000, 8 * MiB, 4242));
  b.alloc(30, 0x5a00000001, 12 * MiB, 0, 0, Kind::kArray);
  b.free(40, 0x7f8000000000, 0, Kind::kIpcImport);
  b.event(import_of(50, 0x7f8000200000, 1 * MiB, 0));
  return b.end(100);
}

}  // namespace

TEST_CASE("an import is listed with its exporter, never in the peak, the live set at the peak or the arena") {
  const Report rep = report_both(importer());
  REQUIRE(rep.devices.size() == 1);
  const DeviceReport& d = rep.devices[0];
  CHECK(d.peak_bytes == 14 * MiB);  // 2 MiB + the 12 MiB array; not the 8 MiB import
  CHECK(d.peak_time_ns == TraceBuilder::kStart + 30);
  CHECK(d.frag_at_peak.live_bytes == 2 * MiB);  // the array is no place in the address space
  CHECK(d.frag_at_peak.arena_bytes == 2 * MiB);
  uint64_t at_peak = 0;
  for (const auto& s : d.top_sites) at_peak += s.bytes;
  CHECK(at_peak == 14 * MiB);
  CHECK(d.counts.imports == 2);
  CHECK(d.peak_import_bytes == 8 * MiB);
  CHECK(d.end_live_bytes[int(Kind::kIpcImport)] == 1 * MiB);
  CHECK(d.end_live_count[int(Kind::kIpcImport)] == 1);
  CHECK(d.end_device_bytes == 14 * MiB);
  REQUIRE(d.import_pids.size() == 1);
  CHECK(d.import_pids[0] == 4242);

  std::ostringstream text;
  write_text(text, rep);
  CHECK(text.str().find("imports (other processes' memory, not counted here): 2 imports, at most 8.00 MiB "
                        "(8,388,608 B) mapped at once, 1.00 MiB (1,048,576 B) in 1 import open at end; exporter "
                        "pid 4242\n") != std::string::npos);
}

TEST_CASE("a share is counted on the exporter and changes no bytes") {
  const Report rep = report_both(exporter());
  REQUIRE(rep.devices.size() == 1);
  CHECK(rep.devices[0].counts.shares == 1);
  CHECK(rep.devices[0].peak_bytes == 8 * MiB);
  CHECK(rep.devices[0].end_device_bytes == 8 * MiB);
  CHECK(rep.devices[0].counts.imports == 0);
}

TEST_CASE("job: the memory a consumer imports counts once, in its exporter's peak") {
  Report a = report_both(exporter());
  Report b = report_both(importer());
  a.path = "exporter.trace";
  b.path = "importer.trace";
  a.process->pid = 100;
  b.process->pid = 200;
  const Job j = build_job({a, b}, std::vector<std::vector<DeviceInfo>>(2), 1000);
  REQUIRE(j.gpus.size() == 1);
  CHECK(j.gpus[0].peak_sum_bytes == 8 * MiB + 14 * MiB);  // the 8 MiB import is not added again
}

namespace {

// A snapshot of two devices whose entries are `entry_bytes` long (a 1.8 writer's are
// shorter than this reader's struct), device 0 with array and ipc-import bytes set.
std::string snapshot_payload(uint32_t entry_bytes) {
  fmt::SnapshotRecord r{};
  r.time_ns = TraceBuilder::kStart + 5;
  r.reason = uint32_t(fmt::SnapshotReason::kExit);
  r.device_count = 2;
  r.entry_bytes = entry_bytes;
  std::string p = TraceBuilder::pod(r);
  for (int32_t dev : {0, 1}) {
    fmt::DeviceSnapshot s{};
    s.device = dev;
    s.live_bytes[int(Kind::kDevice)] = 1000 + uint64_t(dev);
    s.live_bytes_more[int(Kind::kArray) - fmt::kSnapshotKinds] = 2000;
    s.live_bytes_more[int(Kind::kIpcImport) - fmt::kSnapshotKinds] = 3000;
    std::string e = TraceBuilder::pod(s);
    e.resize(entry_bytes, '\0');
    p += e;
  }
  return p;
}

}  // namespace

TEST_CASE("snapshot entries: 1.9's array and import bytes are read, a 1.8 entry has them 0") {
  TraceBuilder now;
  now.process().record(fmt::RecordType::kSnapshot, snapshot_payload(sizeof(fmt::DeviceSnapshot)));
  const Trace t = parse(now);
  REQUIRE(t.snapshots.size() == 1);
  const auto& d = t.snapshots[0].devices.at(0);
  CHECK(d.live_bytes[int(Kind::kDevice)] == 1000);
  CHECK(d.live_bytes[int(Kind::kArray)] == 2000);
  CHECK(d.live_bytes[int(Kind::kIpcImport)] == 3000);

  TraceBuilder old(8);
  old.process().record(fmt::RecordType::kSnapshot,
                       snapshot_payload(uint32_t(offsetof(fmt::DeviceSnapshot, graph_used_current))));
  const Trace o = parse(old);
  REQUIRE(o.snapshots.size() == 1);
  REQUIRE(o.snapshots[0].devices.size() == 2);
  CHECK(o.snapshots[0].devices[0].live_bytes[int(Kind::kArray)] == 0);
  CHECK(o.snapshots[0].devices[0].live_bytes[int(Kind::kIpcImport)] == 0);
  CHECK(o.snapshots[0].devices[1].device == 1);
  CHECK(o.snapshots[0].devices[1].live_bytes[int(Kind::kDevice)] == 1001);
}
