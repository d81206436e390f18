// CUDA IPC across traces (docs/cli.md, "Several traces: the job"): imports are paired with
// exports by the handle's identity (trace 1.15); an export still open in an importer at
// both clean ends is "exported to pid N, still open", neither leaked nor cache in the
// exporter's row; one trace alone says nothing of it. Figures worked out by hand below.
#include <sstream>

#include "catch.h"
#include "cumemtrace/rules/ipc_id.h"
#include "render/job_view.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "reports/job/job.h"
#include "reports/report.h"
#include "report_both.h"
#include "sizes.h"
#include "trace_builder.h"

using namespace cumemtrace;
using cumemtrace::test::report_both;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;
using fmt::Kind;
using fmt::Op;

namespace {

fmt::EventRecord with_ipc_id(fmt::EventRecord e, uint64_t id) {
  e.handle = id;
  e.flags = fmt::kEventIpcId;
  return e;
}
fmt::EventRecord ipc_share(uint64_t t, uint64_t address, uint64_t size, uint64_t id) {
  return with_ipc_id(TraceBuilder::ev(t, Op::kShare, Kind::kDevice, address, size, 0, 0, 4), id);
}
fmt::EventRecord ipc_import(uint64_t t, uint64_t address, uint64_t size, uint64_t id) {
  return with_ipc_id(TraceBuilder::ev(t, Op::kAlloc, Kind::kIpcImport, address, size, 0, 0, 3), id);
}

// The exporter: stack 2 allocates through libc10_cuda.so (PyTorch's cache), stack 3 is its
// own cudaMalloc.
//   A 16 MiB, stack 2, exported (identity 0xa1), live at the end: held by PyTorch's cache
//   D  8 MiB, stack 3, exported (0xd4), live at the end: a possible leak
//   B  4 MiB, stack 3, exported (0xb2), freed
//   C  2 MiB, stack 3, never exported, live at the end: a possible leak
// Alone at its end: 26 MiB live, 16 MiB held by the cache, 10 MiB possible leaks.
TraceBuilder pair_exporter(bool clean_end = true) {
  TraceBuilder b;
  b.process().device(0, 80 * GiB).api(1, "cudaMalloc").api(2, "cudaFree").api(4, "cudaIpcGetMemHandle");
  b.module(0, 0x400000, 0x500000, "/opt/app/trainer");
  b.module(0, 0x700000, 0x800000, "/usr/lib/python3/dist-packages/torch/lib/libc10_cuda.so");
  b.stack(1, 0, 0x401000).stack(2, 1, 0x701000).stack(3, 0, 0x402000);
  b.alloc(10, 0x7f0000000000, 16 * MiB, 2).event(ipc_share(11, 0x7f0000000000, 16 * MiB, 0xa1));
  b.alloc(20, 0x7f8000000000, 8 * MiB, 3).event(ipc_share(21, 0x7f8000000000, 8 * MiB, 0xd4));
  b.alloc(30, 0x7f8001000000, 4 * MiB, 3).event(ipc_share(31, 0x7f8001000000, 4 * MiB, 0xb2));
  b.alloc(40, 0x7f8002000000, 2 * MiB, 3);
  b.free(90, 0x7f8001000000);
  return clean_end ? b.end(100) : b;
}

// An importer: A and D open to its end, B closed, and 1 MiB of a process whose trace is
// not given (0x77), open.
TraceBuilder pair_importer() {
  TraceBuilder b;
  b.process().device(0, 80 * GiB).api(2, "cudaFree").api(3, "cudaIpcOpenMemHandle");
  b.event(ipc_import(50, 0x7e0000000000, 16 * MiB, 0xa1));
  b.event(ipc_import(51, 0x7e0001000000, 8 * MiB, 0xd4));
  b.event(ipc_import(52, 0x7e0002000000, 4 * MiB, 0xb2));
  b.free(60, 0x7e0002000000, 0, Kind::kIpcImport);
  b.event(ipc_import(70, 0x7e0003000000, 1 * MiB, 0x77));
  return b.end(100);
}

Report pair_report(const TraceBuilder& b, uint32_t pid) {
  Report r = report_both(b.vec(), "trace-" + std::to_string(pid));
  r.process->pid = pid;
  return r;
}

Job pair_job(const std::vector<Report>& reports) {
  return build_job(reports, std::vector<std::vector<DeviceInfo>>(reports.size()), 10);
}

std::string job_text(const Job& j) {
  std::ostringstream out;
  write_job_text(out, j);
  return out.str();
}

}  // namespace

TEST_CASE("ipc: one trace records its exports and imports with their identity, and counts them as before") {
  const Report e = pair_report(pair_exporter(), 100);
  REQUIRE(e.ipc.exports.size() == 3);
  CHECK(e.ipc.exports[0].id == 0xa1);
  CHECK(e.ipc.exports[0].size == 16 * MiB);
  CHECK(e.ipc.exports[0].live_at_end);
  CHECK(e.ipc.exports[0].held_by_cache);
  CHECK(e.ipc.exports[1].id == 0xd4);
  CHECK(e.ipc.exports[1].live_at_end);
  CHECK_FALSE(e.ipc.exports[1].held_by_cache);
  CHECK(e.ipc.exports[2].id == 0xb2);
  CHECK_FALSE(e.ipc.exports[2].live_at_end);
  // Alone, the exporter cannot know that another process holds A and D: as before.
  CHECK(e.devices.at(0).end_device_bytes == 26 * MiB);
  CHECK(e.devices.at(0).end_held_by_cache_bytes == 16 * MiB);
  CHECK(e.devices.at(0).end_possible_leak_bytes == 10 * MiB);

  const Report i = pair_report(pair_importer(), 200);
  REQUIRE(i.ipc.imports.size() == 4);
  CHECK(i.ipc.imports[0].id == 0xa1);
  CHECK(i.ipc.imports[0].open_at_end);
  CHECK(i.ipc.imports[2].id == 0xb2);
  CHECK_FALSE(i.ipc.imports[2].open_at_end);
  CHECK(i.ipc.imports[3].id == 0x77);
  CHECK(i.devices.at(0).import_pids.empty());  // an identity names no pid
}

TEST_CASE("ipc: the job pairs imports with exports by identity, and what is still open leaves leaked and cache") {
  const Job j = pair_job({pair_report(pair_importer(), 200), pair_report(pair_exporter(), 100)});
  REQUIRE(j.processes.size() == 2);
  const JobProcess& ex = j.processes[0];  // rows by pid
  REQUIRE(ex.pid == 100);
  // 26 MiB live at its end: A (16 MiB, cache) and D (8 MiB, leak) still open in pid 200,
  // so 0 B of cache and 10 - 8 = 2 MiB (C) leaked.
  CHECK(ex.exported_open_bytes == 24 * MiB);
  CHECK(ex.held_by_cache_bytes == 0);
  CHECK(ex.leaked_bytes == 2 * MiB);
  CHECK(j.processes[1].exported_open_bytes == 0);
  REQUIRE(j.ipc.size() == 4);
  CHECK(j.ipc[0].importer == 1);
  CHECK(j.ipc[0].exporter == 0);
  CHECK(j.ipc[0].exporter_pid == 100);
  CHECK(j.ipc[0].bytes == 16 * MiB);
  CHECK(j.ipc[0].open_at_end);
  CHECK(j.ipc[0].still_open);
  CHECK(j.ipc[1].still_open);
  CHECK(j.ipc[2].exporter == 0);
  CHECK_FALSE(j.ipc[2].open_at_end);  // B: closed, and freed by its exporter
  CHECK_FALSE(j.ipc[2].still_open);
  CHECK_FALSE(j.ipc[3].exporter.has_value());
  CHECK(j.ipc[3].exporter_pid == 0);
  CHECK(j.ipc[3].open_at_end);
  CHECK_FALSE(j.ipc[3].still_open);

  CHECK(job_text(j).find("\nCUDA IPC imports (paired with their exports by the handle's identity):\n"
                         "  pid 200 imported 16.00 MiB from pid 100: exported to pid 200, still open (neither leaked "
                         "nor cache in pid 100)\n"
                         "  pid 200 imported 8.00 MiB from pid 100: exported to pid 200, still open (neither leaked "
                         "nor cache in pid 100)\n"
                         "  pid 200 imported 4.00 MiB from pid 100: closed\n"
                         "  pid 200 imported 1.00 MiB from unknown (the exporter's trace is not among those given): "
                         "still open at its end\n") != std::string::npos);
  const auto json = job_to_json(j);
  CHECK(json.at("processes").at(0).at("exported_still_open_bytes") == 24 * MiB);
  CHECK(json.at("processes").at(0).at("leaked_bytes") == 2 * MiB);
  CHECK(json.at("processes").at(0).at("held_by_cache_at_exit_bytes") == 0);
  const auto& first = json.at("ipc").at(0);
  CHECK(first.at("importer") == 1);
  CHECK(first.at("importer_pid") == 200);
  CHECK(first.at("exporter") == 0);
  CHECK(first.at("exporter_pid") == 100);
  CHECK(first.at("id") == "00000000000000a1");
  CHECK(first.at("bytes") == 16 * MiB);
  CHECK(first.at("device") == 0);
  CHECK(first.at("open_at_end") == true);
  CHECK(first.at("still_open") == true);
  CHECK(json.at("ipc").at(3).at("exporter").is_null());
  CHECK(json.at("ipc").at(3).at("exporter_pid").is_null());
}

TEST_CASE("ipc: with the job, the exporter's own report counts what is still open apart") {
  std::vector<Report> reports = {pair_report(pair_importer(), 200), pair_report(pair_exporter(), 100)};
  const Job j = pair_job(reports);
  set_aside_exports(j, reports);
  const Report& e = reports[1];
  const DeviceReport& d = e.devices.at(0);
  // 26 MiB live at its end: A (16 MiB, PyTorch's cache) and D (8 MiB, a possible leak) are
  // still open in pid 200; C (2 MiB) stays a possible leak.
  CHECK(d.end_device_bytes == 26 * MiB);
  CHECK(d.end_exported_open_bytes == 24 * MiB);
  CHECK(d.end_held_by_cache_bytes == 0);
  CHECK(d.end_possible_leak_bytes == 2 * MiB);
  CHECK(e.held_by_cache.empty());  // A was the cache's only allocation
  REQUIRE(e.leaks.size() == 1);
  CHECK(e.leaks[0].bytes == 2 * MiB);
  CHECK(e.leaks[0].count == 1);
  REQUIRE(e.leaks[0].sites.size() == 1);  // D and C were one row (stack 3): C is left
  CHECK(e.leaks[0].sites[0].bytes == 2 * MiB);
  CHECK(e.leaks[0].sites[0].count == 1);
  CHECK(e.ipc.exports[0].still_open_in == 200);
  CHECK(e.ipc.exports[1].still_open_in == 200);
  CHECK(e.ipc.exports[2].still_open_in == 0);  // B: freed
  std::ostringstream text;
  write_text(text, e);
  CHECK(text.str().find("  at exit on device 0: possible leaks 2.00 MiB (2,097,152 B), exported and still open "
                        "elsewhere 24.00 MiB (25,165,824 B)\n") != std::string::npos);
  CHECK(text.str().find("\nExported to other processes, still open there at exit (the job view paired them: neither "
                        "leaks nor cache)\n"
                        "  exported to pid 200, still open: 16.00 MiB (16,777,216 B) on device 0 (else held by "
                        "PyTorch's cache)\n"
                        "  exported to pid 200, still open: 8.00 MiB (8,388,608 B) on device 0 (else a possible "
                        "leak)\n") != std::string::npos);
  const auto json = to_json(e);
  CHECK(json.at("devices").at(0).at("end").at("exported_still_open_bytes") == 24 * MiB);
  CHECK(json.at("devices").at(0).at("end").at("possible_leak_bytes") == 2 * MiB);
  REQUIRE(json.at("exported_still_open").size() == 2);
  CHECK(json.at("exported_still_open").at(0).at("pid") == 200);
  CHECK(json.at("exported_still_open").at(0).at("address") == 0x7f0000000000);
  CHECK(json.at("exported_still_open").at(0).at("bytes") == 16 * MiB);
  // The importer's report has nothing of its own set aside; one trace alone neither.
  CHECK(reports[0].devices.at(0).end_exported_open_bytes == 0);
  CHECK(to_json(pair_report(pair_exporter(), 100)).at("exported_still_open").empty());
}

TEST_CASE("ipc: an export held open by two importers leaves the exporter's figures once") {
  TraceBuilder second;
  second.process().device(0, 80 * GiB).api(3, "cudaIpcOpenMemHandle");
  second.event(ipc_import(50, 0x7d0000000000, 16 * MiB, 0xa1));
  second.end(100);
  const Job j =
      pair_job({pair_report(pair_exporter(), 100), pair_report(pair_importer(), 200), pair_report(second, 300)});
  CHECK(j.processes[0].exported_open_bytes == 24 * MiB);  // A once, D once
  CHECK(j.processes[0].leaked_bytes == 2 * MiB);
  REQUIRE(j.ipc.size() == 5);
  CHECK(j.ipc[4].importer == 2);
  CHECK(j.ipc[4].still_open);
  CHECK(job_text(j).find("  pid 300 imported 16.00 MiB from pid 100: exported to pid 300, still open") !=
        std::string::npos);
}

TEST_CASE("ipc: the exporter's trace given alone, cut short, or before 1.15") {
  // The importer alone: every exporter unknown, nothing to take from anyone.
  const Job alone = pair_job({pair_report(pair_importer(), 200)});
  REQUIRE(alone.ipc.size() == 4);
  for (const auto& l : alone.ipc) CHECK_FALSE(l.exporter.has_value());
  CHECK(job_text(alone).find("  pid 200 imported 16.00 MiB from unknown (the exporter's trace is not among those "
                             "given): still open at its end\n") != std::string::npos);

  // An exporter cut short: paired, but not known live at a clean end, so nothing moves.
  const Job cut = pair_job({pair_report(pair_exporter(false), 100), pair_report(pair_importer(), 200)});
  CHECK(cut.ipc[0].exporter == 0);
  CHECK(cut.ipc[0].open_at_end);
  CHECK_FALSE(cut.ipc[0].still_open);
  CHECK(cut.processes[0].exported_open_bytes == 0);
  CHECK_FALSE(cut.processes[0].leaked_bytes.has_value());

  // A 1.14 importer names a pid in `handle` (no ipc-id flag): named, never paired.
  TraceBuilder old(14);
  old.process().device(0, 80 * GiB).api(3, "cudaIpcOpenMemHandle");
  auto e = TraceBuilder::ev(50, Op::kAlloc, Kind::kIpcImport, 0x7e0000000000, 16 * MiB, 0, 0, 3);
  e.handle = 4242;
  old.event(e).end(100);
  const Job legacy = pair_job({pair_report(pair_exporter(), 100), pair_report(old, 200)});
  REQUIRE(legacy.ipc.size() == 1);
  CHECK_FALSE(legacy.ipc[0].exporter.has_value());
  CHECK(legacy.ipc[0].exporter_pid == 4242);
  CHECK(legacy.ipc[0].id == 0);
  CHECK(legacy.processes[0].leaked_bytes == 10 * MiB);  // nothing paired: as alone
  CHECK(job_text(legacy).find("  pid 200 imported 16.00 MiB from pid 4242 (its trace is not among those given): "
                              "still open at its end\n") != std::string::npos);
}

TEST_CASE("ipc: the identity is 64-bit FNV-1a of the handle's 64 bytes") {
  // Worked out apart from the rule (Python: h = 0xcbf29ce484222325; for x in bytes:
  // h = ((h ^ x) * 0x100000001b3) % 2**64), over 64 zero bytes, and over 0xff then 63 zeros:
  // a char above 127 hashes as its unsigned value.
  const unsigned char zeros[fmt::kIpcHandleBytes] = {};
  CHECK(fmt::ipc_id(zeros) == 0xb9b23f3a46fd0825ull);
  char high[fmt::kIpcHandleBytes] = {};
  high[0] = char(0xff);
  CHECK(fmt::ipc_id(high) == 0x0de9414b22a17ddaull);
}
