// Each trace in failing-traces/ (README.md there) was mishandled by cumemtrace 0.1.0;
// each test asserts what is right for it, with the figures worked out from the bytes.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>
#include <sstream>
#include <string>

#include "catch.h"
#include "reports/report.h"
#include "report_both.h"
#include "render/report_json.h"
#include "render/report_text.h"
#include "symbols/symbolize.h"
#include "base/text.h"

using namespace cumemtrace;
using cumemtrace::test::text_of;

namespace {

std::string trace_path(const std::string& name) { return std::string(CUMEMTRACE_FAILING_TRACES) + "/" + name; }

// Read both ways a command can read it (report_both.h).
Report report_of(const std::string& name) {
  std::ifstream in(trace_path(name), std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return cumemtrace::test::report_both(bytes, trace_path(name));
}

}  // namespace

TEST_CASE("failing-traces/utf8-hostname-min: a host name of byte 0xFF gives valid JSON, escaped as backslash-x-ff") {
  const Report rep = report_of("utf8-hostname-min.trace");
  const std::string out = to_json(rep).dump(2);  // throws on invalid UTF-8
  const auto j = nlohmann::json::parse(out);
  CHECK(j["process"]["hostname"] == "\\xff");
  CHECK(has(text_of(rep), "on \\xff\n"));
}

TEST_CASE("failing-traces/ansi-escape-cmdline: control characters are shown escaped in text") {
  const std::string s = text_of(report_of("ansi-escape-cmdline.trace"));
  CHECK(s.find('\x1b') == std::string::npos);
  CHECK(has(s, "  command: 'prog\\x0aDevice 0: everything is fine\\x1b[0m'\n"));
}

TEST_CASE("failing-traces/huge-alloc-min: an 8 EiB allocation on an 8 GiB device is flagged, never summed") {
  const Report rep = report_of("huge-alloc-min.trace");
  REQUIRE(rep.integrity.impossible.size() == 1);
  CHECK(rep.integrity.impossible[0].event.size == (1ull << 63));
  CHECK(rep.integrity.incomplete());
  REQUIRE(rep.devices.size() == 1);
  CHECK(rep.devices[0].peak_bytes == 0);
  const std::string s = text_of(rep);
  CHECK_FALSE(has(s, "ended cleanly"));
  CHECK(has(s, "IMPOSSIBLE EVENT #0: allocation of 8.00 EiB"));
}

TEST_CASE("failing-traces/payload-len-swallows-9-events: the damage is found at byte 3077, the rest is read") {
  const Trace t = read_trace(trace_path("payload-len-swallows-9-events.trace"));
  REQUIRE(t.damage.size() == 1);
  CHECK(t.damage[0].byte_offset == 3077);
  CHECK(t.damage[0].bytes == 72);  // the damaged Event record (8 + 64 bytes): resumed at 3149
  CHECK(t.events.size() == 16);    // 17 written, one lost in the damage
  REQUIRE(t.end);
  const Report rep = build_report(t, ReportOptions{});
  REQUIRE(rep.integrity.end_mismatch);
  CHECK(rep.integrity.end_mismatch->announced == 17);
  CHECK(rep.integrity.end_mismatch->read == 16);
  const std::string s = text_of(rep);
  CHECK(has(s, "DAMAGED: 72 B at byte 3077"));
  CHECK(has(s, "FIGURES ARE INCOMPLETE"));
  CHECK_FALSE(has(s, "ended cleanly"));
}

TEST_CASE("failing-traces/end-count-mismatch-min: the End record's 5 events against 1 read is reported") {
  const Report rep = report_of("end-count-mismatch-min.trace");
  REQUIRE(rep.integrity.end_mismatch);
  CHECK(rep.integrity.end_mismatch->announced == 5);
  CHECK(rep.integrity.end_mismatch->read == 1);
  const std::string s = text_of(rep);
  CHECK(has(s, "END RECORD MISMATCH: it counts 5 events written, 1 were read"));
  CHECK_FALSE(has(s, "ended cleanly"));
  CHECK(to_json(rep)["integrity"]["end_record_mismatch"]["events_announced"] == 5);
}

TEST_CASE("failing-traces/buffer-drop-wrong-peak: lower bounds, with the exit snapshot's 1,667,771,900 B beside") {
  const Report rep = report_of("buffer-drop-wrong-peak.trace");
  CHECK(rep.integrity.events_dropped == 23418);
  const DeviceReport* dev = nullptr;
  for (const auto& d : rep.devices)
    if (d.device == 0) dev = &d;
  REQUIRE(dev);
  REQUIRE(dev->exit_snapshot);
  uint64_t live = 0;
  for (uint64_t b : dev->exit_snapshot->live_bytes) live += b;
  CHECK(live == 1667771900);
  const std::string s = text_of(rep);
  CHECK(has(s, "23418 EVENTS DROPPED"));
  CHECK(has(s, "peak requested device bytes (at least): "));
  CHECK(has(s, "the library's own count at exit: 1.55 GiB (1,667,771,900 B) live"));
  const auto j = to_json(rep);
  CHECK(j["integrity"]["figures_complete"] == false);
  CHECK(j["devices"][0]["peak"]["lower_bound"] == true);
  CHECK(j["devices"][0]["device"] == 0);
}

TEST_CASE("failing-traces/vmm-reservation-missing: 8 GiB reserved with no device is reported, text and JSON") {
  const Report rep = report_of("vmm-reservation-missing.trace");
  REQUIRE(rep.reservations.size() == 1);
  CHECK(rep.reservations[0].device == -1);
  CHECK(rep.reservations[0].end_bytes == (8ull << 30));
  CHECK(rep.reservations[0].end_count == 1);
  CHECK(
      has(text_of(rep), "no device named: 1 reserved, 0 freed; peak 8.00 GiB (8,589,934,592 B); live at end 8.00 GiB"));
  CHECK(to_json(rep)["reservations"][0]["end_bytes"] == (8ull << 30));
}

TEST_CASE("failing-traces/symbolize-cuts-damaged: symbolize keeps every record after the damage") {
  char dir[] = "/tmp/cumemtrace-symdamage-XXXXXX";
  REQUIRE(mkdtemp(dir));
  const std::string copy = std::string(dir) + "/t.trace";
  std::filesystem::copy_file(trace_path("symbolize-cuts-damaged.trace"), copy);
  const Trace before = read_trace(copy);
  REQUIRE(before.damage.size() == 1);
  CHECK(before.damage[0].byte_offset == 2813);
  CHECK(before.events.size() == 16);  // 17 written, the damaged one lost
  const SymbolizeFileResult r = symbolize_file(copy);
  CHECK(r.ok);
  const Trace after = read_trace(copy);
  CHECK(after.events.size() == 16);
  CHECK(after.stack_nodes.size() == before.stack_nodes.size());
  CHECK(after.snapshots.size() == before.snapshots.size());
  CHECK(after.end.has_value());
  std::filesystem::remove_all(dir);
}

TEST_CASE("failing-traces/nvml-claim-oom: NVML figures are stated once, consistently") {
  const std::string s = text_of(report_of("nvml-claim-oom.trace"));
  CHECK_FALSE(has(s, "NVML: no figures"));
  CHECK(has(s, "NVML (nvidia-smi) process usage (no peak: nothing was live)"));
  CHECK(has(s, "512.00 MiB (536,870,912 B) = footprint 0 B + context 512.00 MiB + untracked 0 B"));
}

TEST_CASE("a trace file reported from its mapping, events read again at each pass, is reported as when read whole") {
  const std::string path = trace_path("buffer-drop-wrong-peak.trace");
  const TraceFile file(path, /*hold_bytes=*/0);
  CHECK(file.trace().events.empty());
  const Trace whole = read_trace(path);
  REQUIRE(file.events().size() == whole.events.size());
  CHECK(to_json(build_report(file.trace(), file.events(), ReportOptions{})).dump() ==
        to_json(build_report(whole, ReportOptions{})).dump());
  const TraceFile held(path);  // 1 MB: under TraceFile::kHoldBytes, read whole
  CHECK(held.holds_events());
  CHECK(held.trace().events.size() == whole.events.size());
  // `live` in passes, in time order (one replay for all moments, given out of order).
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const uint64_t end = last_moment(whole), start = whole.process->start_monotonic_ns;
  const auto lives =
      cumemtrace::test::live_both(bytes, {end, start + (end - start) / 2, start, *peak_moment_of(replay(whole))});
  CHECK(lives[0].events_applied == whole.events.size());
  CHECK(lives[2].events_applied == 0);
}
