// The report's head: the trace, the process that wrote it, its integrity (everything that
// makes the figures below less than the whole truth, said before them) and its devices.
#include "render/report/sections.h"

#include <ctime>

#include "base/escape.h"
#include "base/plural.h"
#include "base/units.h"

namespace cumemtrace {
namespace {

using json = nlohmann::ordered_json;

std::string wall_time(uint64_t realtime_ns) {
  const time_t secs = time_t(realtime_ns / 1000000000ull);
  struct tm tm;
  if (!gmtime_r(&secs, &tm)) return "?";
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string command_line(const ProcessInfo& p) {
  std::string s;
  for (const auto& a : p.argv) {
    if (!s.empty()) s += ' ';
    const std::string e = printable(a);
    s += e.find_first_of(" \t'\"") == std::string::npos && !e.empty() ? e : "'" + e + "'";
  }
  return s;
}

// Everything that makes the figures below less than the whole truth, said before them.
void integrity(std::ostream& out, const Report& rep) {
  const Integrity& in = rep.integrity;
  if (in.sealed) out << "  checksums: " << count_of(in.sealed_chunks, "chunk") << " verified\n";
  for (const auto& d : in.damage)
    out << "  DAMAGED: " << iec_exact(d.bytes) << " at byte " << d.byte_offset << " unread: " << printable(d.message)
        << "\n";
  if (in.end_mismatch)
    out << "  END RECORD MISMATCH: it counts " << count_of(in.end_mismatch->announced, "event") << " written, "
        << in.end_mismatch->read << " were read\n";
  if (in.events_dropped)
    out << "  " << in.events_dropped << " EVENTS DROPPED by the writer (its buffer was full): replayed figures are"
        << " lower bounds; the library's own figures at exit are shown beside them\n";
  for (const auto& e : in.impossible)
    out << "  IMPOSSIBLE EVENT #" << e.index << ": " << e.why << "; left out of every figure\n";
  for (const auto& b : in.bounded) out << "  BOUNDED BY THE TRACER: " << b.says << "\n";
  if (in.incomplete()) out << "  FIGURES ARE INCOMPLETE: events are missing or were set aside (above)\n";
  if (rep.complete && !in.incomplete()) {
    out << "  the trace ended cleanly"
        << (rep.exec_into ? ": the process exec'd into " + printable(*rep.exec_into) : "")
        << (in.bounded.empty() ? "" : ", but not all it was told was kept (BOUNDED above)") << "\n";
  } else if (!rep.complete) {
    out << "  THE TRACE HAS NO END RECORD: the process died before finishing it (killed, or _exit)"
        << (in.damage.empty() ? "" : ", or the end is damaged") << ".\n";
  }
}

json integrity(const Integrity& in) {
  json damage = json::array();
  for (const auto& d : in.damage)
    damage.push_back({{"byte_offset", d.byte_offset}, {"bytes", d.bytes}, {"message", d.message}});
  json impossible = json::array();
  for (const auto& e : in.impossible)
    impossible.push_back({{"event_index", e.index},
                          {"time_ns", e.event.time_ns},
                          {"device", e.event.device},
                          {"size", e.event.size},
                          {"why", e.why}});
  json bounded = json::array();
  for (const auto& b : in.bounded)
    bounded.push_back(
        {{"what", b.key}, {"cap", b.cap}, {"dropped", b.dropped}, {"says", b.says}, {"affects", b.affects}});
  return {{"checksummed", in.sealed},
          {"checksummed_chunks", in.sealed_chunks},
          {"damaged_ranges", std::move(damage)},
          {"end_record_mismatch", in.end_mismatch ? json{{"events_announced", in.end_mismatch->announced},
                                                         {"events_read", in.end_mismatch->read}}
                                                  : json(nullptr)},
          {"events_dropped", in.events_dropped},
          {"impossible_events", std::move(impossible)},
          {"bounded", std::move(bounded)},
          {"figures_complete", !in.incomplete()}};
}

}  // namespace

void trace_text(std::ostream& out, const Report& rep) {
  out << "cumemtrace report: " << printable(rep.path) << "\n";
  if (rep.process) {
    const auto& p = *rep.process;
    out << "  command: " << command_line(p) << "\n";
    out << "  pid " << p.pid << " (parent " << p.ppid << ") on " << (p.hostname.empty() ? "?" : printable(p.hostname));
    if (p.rank >= 0) out << ", rank " << p.rank;
    out << "\n  started " << wall_time(p.start_realtime_ns) << ", traced for " << seconds(rep.duration_ns)
        << (rep.complete ? "" : " (until the trace stops)") << "\n";
    if (!p.tool_version.empty()) out << "  traced by cumemtrace " << printable(p.tool_version) << "\n";
  } else {
    out << "  (no process record)\n";
  }
  out << "  " << count_of(rep.events, "event") << ", " << rep.events_dropped << " dropped by the writer";
  if (rep.unknown_records) out << ", " << count_of(rep.unknown_records, "record") << " of unknown type skipped";
  out << ", " << count_of(rep.symbols, "ip") << " symbolized\n";
  integrity(out, rep);
  for (const auto& d : rep.devices) {
    if (d.device < 0) continue;
    out << "  " << device_label(d.device) << ": " << (d.name.empty() ? "?" : printable(d.name)) << ", "
        << iec_exact(d.total_bytes) << "\n";
  }
}

void trace_json(json& j, const Report& rep, const JsonContext&) {
  j["format"] = "cumemtrace-report";
  j["schema_version"] = 3;
  j["trace"] = {{"path", rep.path},
                {"complete", rep.complete},
                {"exec_into", rep.exec_into ? json(*rep.exec_into) : json(nullptr)},
                {"error", rep.error ? json{{"byte_offset", rep.error->byte_offset},
                                           {"message", rep.error->message},
                                           {"truncated", rep.error->truncated}}
                                    : json(nullptr)},
                {"events", rep.events},
                {"events_dropped", rep.events_dropped},
                {"unknown_records", rep.unknown_records},
                {"symbolized_ips", rep.symbols}};
  j["integrity"] = integrity(rep.integrity);
  if (rep.process) {
    const auto& p = *rep.process;
    j["process"] = {{"pid", p.pid},
                    {"ppid", p.ppid},
                    {"hostname", p.hostname},
                    {"rank", p.rank},
                    {"command_line", p.argv},
                    {"tool_version", p.tool_version},
                    {"start_monotonic_ns", p.start_monotonic_ns},
                    {"start_realtime_ns", p.start_realtime_ns},
                    {"granule_bytes", p.granule_bytes},
                    {"stack_depth", p.stack_depth}};
    // Trace 1.8: what the launcher said (-1 and {} in older traces).
    j["process"]["local_rank"] = p.local_rank;
    j["process"]["world_size"] = p.world_size;
    nlohmann::ordered_json launcher = nlohmann::ordered_json::object();
    for (const auto& [k, v] : p.launcher) launcher[k] = v;
    j["process"]["launcher"] = std::move(launcher);
    nlohmann::ordered_json environment = nlohmann::ordered_json::object();
    for (const auto& [k, v] : p.environment) environment[k] = v;
    j["process"]["environment"] = std::move(environment);
  } else {
    j["process"] = nullptr;
  }
  j["duration_ns"] = rep.duration_ns;
}

}  // namespace cumemtrace
