// CUDA arrays and CUDA IPC (arrays_ipc.c), through every lookup path, counted once.
// Bytes worked out from the descriptors (interpose/hooks/array_size.h's rule):
//   A1 1024 x 768 texels x 4 channels x 4 B (float)       = 12,582,912
//   A2 64 x 64 x 16 texels x 2 channels x 2 B (half)       =    262,144
//   D1 1000 texels x 1 channel x 2 B (u16)                 =      2,000
//   D2 32 x 32 x 8 texels x 2 channels x 4 B (s32)         =     65,536
//   M  (256^2 + 128^2 + 64^2) texels x 4 B (float)         =    344,064
//   P  100 x 10 texels x 4 channels x 1 B (u8)             =      4,000
// All six live at once: 13,260,656 B, the peak. Then A1, D1, M, P go: 327,680 B of arrays
// stay, and B's 8 MiB (8,388,608 B) join them: 8,716,288 B at exit. The imports of B
// (8 MiB each) and the hand-made one (3,145,733 B) never add to these figures; I3 and I4
// are open together: 11,534,341 B imported at most.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

#include "harness.h"

using namespace harness;

TEST_CASE("arrays are device bytes without an address, imports are listed and never counted") {
  TempDir dir;
  const Result r = traced(dir, {here("arrays_ipc")});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "arrays and imports done\n");
  const auto j = report(only_trace(dir));
  const auto& d = device(j, 0);
  CHECK(d.at("peak").at("device_bytes") == 13260656);
  CHECK(d.at("end").at("device_bytes") == 8716288);
  CHECK(d.at("end").at("live_bytes").at("array") == 327680);
  CHECK(d.at("end").at("live_count").at("array") == 2);
  CHECK(d.at("end").at("live_bytes").at("device") == 8388608);
  CHECK(d.at("end").at("live_bytes").at("ipc-import") == 3145733);
  // Arrays and imports are no place in the address space: only B is laid out there.
  CHECK(d.at("end").at("fragmentation").at("live_bytes") == 8388608);
  CHECK(d.at("fragmentation_at_peak").at("live_bytes") == 0);

  const auto& imports = d.at("imports");
  CHECK(imports.at("count") == 4);
  CHECK(imports.at("peak_bytes") == 11534341);
  CHECK(imports.at("live_bytes_end") == 3145733);
  CHECK(imports.at("live_count_end") == 1);
  CHECK(imports.at("exporter_pids").empty());  // the handle is opaque to the tracer
  CHECK(d.at("counts").at("shares") == 2);
  CHECK(d.at("counts").at("allocs") == 11);  // 6 arrays, B, 4 imports
  CHECK(d.at("counts").at("frees") == 7);    // 4 arrays, 3 closes
  // The second cuArrayDestroy of D1 (refused) names nothing live: no device to put it on,
  // so it is on the row of unknown devices (-1), as any free of unknown memory is.
  CHECK(d.at("counts").at("unknown_frees") == 0);
  CHECK(device(j, -1).at("counts").at("unknown_frees") == 1);
  CHECK(d.at("counts").at("failed") == 0);

  const auto& by_api = d.at("counts_by_api");
  CHECK(by_api.at("cudaMallocArray").at("allocs") == 1);
  CHECK(by_api.at("cudaMalloc3DArray").at("allocs") == 1);
  CHECK(by_api.at("cuArrayCreate_v2").at("allocs") == 2);  // by symbol and by cuGetProcAddress
  CHECK(by_api.at("cuArray3DCreate_v2").at("allocs") == 1);
  CHECK(by_api.at("cuMipmappedArrayCreate").at("allocs") == 1);  // by dlsym
  CHECK(by_api.at("cudaFreeArray").at("frees") == 1);
  CHECK(by_api.at("cuArrayDestroy").at("frees") == 2);
  CHECK(by_api.at("cuMipmappedArrayDestroy").at("frees") == 1);
  CHECK(by_api.at("cudaIpcOpenMemHandle").at("allocs") == 1);
  CHECK(by_api.at("cudaIpcCloseMemHandle").at("frees") == 1);
  CHECK(by_api.at("cuIpcOpenMemHandle_v2").at("allocs") == 2);  // by dlsym and by symbol
  CHECK(by_api.at("cuIpcOpenMemHandle").at("allocs") == 1);
  CHECK(by_api.at("cuIpcCloseMemHandle").at("frees") == 2);

  // The library's own figures at exit say the same (trace 1.9: live_bytes_more).
  const auto& x = d.at("exit_snapshot");
  CHECK(x.at("device_bytes") == 8716288);
  CHECK(x.at("peak_device_bytes") == 13260656);
  CHECK(x.at("live_bytes").at("array") == 327680);
  CHECK(x.at("live_bytes").at("ipc-import") == 3145733);

  // Leaks: B and the two arrays hold this device's memory; the open import is listed too.
  uint64_t array_leak = 0, import_leak = 0;
  for (const auto& leak : j.at("leaks")) {
    if (leak.at("kind") == "array") array_leak += leak.at("bytes").get<uint64_t>();
    if (leak.at("kind") == "ipc-import") import_leak += leak.at("bytes").get<uint64_t>();
  }
  CHECK(array_leak == 327680);
  CHECK(import_leak == 3145733);
}

TEST_CASE("the text report lists the imports on their own line") {
  TempDir dir;
  REQUIRE(traced(dir, {here("arrays_ipc")}).exit_code == 0);
  const Result r = run({cli(), "report", only_trace(dir)});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("imports (other processes' memory, not counted here): 4 imports, at most 11.00 MiB (11,534,341 B) "
                   "mapped at once") != std::string::npos);
  CHECK(r.out.find("exporter pid unknown") != std::string::npos);
  CHECK(r.out.find("2 exported to other processes") != std::string::npos);
  CHECK(r.out.find("array 320.00 KiB (327,680 B) in 2 allocations") != std::string::npos);
}

TEST_CASE("exports take arrays, imports and shares: jsonl names them, memviz, chrome and folded succeed") {
  TempDir dir;
  REQUIRE(traced(dir, {here("arrays_ipc")}).exit_code == 0);
  const std::string trace = only_trace(dir);
  REQUIRE(run({cli(), "export", "--format", "jsonl", trace, "-o", dir.path + "/tables"}).exit_code == 0);
  std::ifstream in(dir.path + "/tables/events.jsonl");
  const std::string events((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(events.find("\"op\":\"share\"") != std::string::npos);
  CHECK(events.find("\"kind\":\"ipc-import\"") != std::string::npos);
  CHECK(events.find("\"kind\":\"array\"") != std::string::npos);
  // memviz draws device, pitch and async memory only (the caching allocator's view).
  const std::string pickle = dir.path + "/m.pickle";
  REQUIRE(run({cli(), "export", "--format", "memviz", trace, "-o", pickle}).exit_code == 0);
  for (const char* format : {"chrome", "folded"})
    CHECK(run({cli(), "export", "--format", format, trace, "-o", dir.path + "/x." + format}).exit_code == 0);
}

// Two processes (ipc_pair.c): the exporter ends with its 16 MiB (16,777,216 B) live and
// exported, the importer with it open. Each trace alone says nothing of the other; both
// given, the job pairs them by the handle's identity and the 16 MiB leave the exporter's
// leaked bytes.
TEST_CASE("an IPC pair: the job names the exporter and the export still open is no leak") {
  TempDir out, exporter_dir, importer_dir;
  const std::string handle = out.path + "/handle";
  const Result e = traced(exporter_dir, {here("ipc_pair"), "export", handle});
  REQUIRE(e.exit_code == 0);
  CHECK(e.out == "exported\n");
  const Result i = traced(importer_dir, {here("ipc_pair"), "import", handle});
  REQUIRE(i.exit_code == 0);
  CHECK(i.out == "imported\n");
  const std::string exporter = only_trace(exporter_dir), importer = only_trace(importer_dir);
  // Each side's event carries the handle's identity (flag ipc-id, 256) and nothing else flagged.
  CHECK(dump_events(exporter, " share device ") == 1);
  CHECK(dump_events(exporter, "flags=256") == 1);
  CHECK(dump_events(importer, " alloc ipc-import ") == 1);
  CHECK(dump_events(importer, "flags=256") == 1);

  const auto alone = report(exporter);
  CHECK(device(alone, 0).at("end").at("possible_leak_bytes") == 16777216);
  const uint32_t exporter_pid = alone.at("process").at("pid");
  CHECK(device(report(importer), 0).at("imports").at("exporter_pids").empty());

  const Result both = run({cli(), "report", "--json", importer, exporter});
  REQUIRE(both.exit_code == 0);
  const auto job = nlohmann::json::parse(both.out).at("job");
  REQUIRE(job.at("ipc").size() == 1);
  const auto& link = job.at("ipc").at(0);
  CHECK(link.at("exporter_pid") == exporter_pid);
  CHECK(link.at("bytes") == 16777216);
  CHECK(link.at("open_at_end") == true);
  CHECK(link.at("still_open") == true);
  const auto& row = job.at("processes").at(link.at("exporter").get<size_t>());
  CHECK(row.at("pid") == exporter_pid);
  CHECK(row.at("leaked_bytes") == 0);
  CHECK(row.at("exported_still_open_bytes") == 16777216);

  // The exporter's own report, given with the importer's, counts the 16 MiB apart.
  const auto traces = nlohmann::json::parse(both.out).at("traces");
  REQUIRE(traces.size() == 2);
  const auto& exported = traces.at(1).at("process").at("pid") == exporter_pid ? traces.at(1) : traces.at(0);
  CHECK(device(exported, 0).at("end").at("possible_leak_bytes") == 0);
  CHECK(device(exported, 0).at("end").at("exported_still_open_bytes") == 16777216);
  const uint32_t importer_pid = job.at("ipc").at(0).at("importer_pid");

  const Result text = run({cli(), "report", importer, exporter});
  REQUIRE(text.exit_code == 0);
  CHECK(has(text.out, "  pid " + std::to_string(importer_pid) + " imported 16.00 MiB from pid " +
                          std::to_string(exporter_pid) + ": exported to pid " + std::to_string(importer_pid) +
                          ", still open (neither leaked nor cache in pid " + std::to_string(exporter_pid) + ")\n"));
  CHECK(has(text.out, "  exported to pid " + std::to_string(importer_pid) +
                          ", still open: 16.00 MiB (16,777,216 B) on device 0 (else a possible leak)\n"));
}
