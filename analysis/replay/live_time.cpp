#include "replay/live_time.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "base/progress.h"
#include "replay/replay.h"

namespace cumemtrace {
namespace {

std::string trimmed(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::optional<uint64_t> peak_moment(const Trace& t) { return peak_moment_of(replay(t)); }

}  // namespace

uint64_t last_moment(const Trace& t) {
  uint64_t last = t.process ? t.process->start_monotonic_ns : 0;
  for (const auto& e : t.events) last = std::max(last, e.time_ns);
  for (const auto& s : t.snapshots) last = std::max(last, s.time_ns);
  if (t.end) last = std::max(last, t.end->time_ns);
  return last;
}

std::optional<uint64_t> peak_moment_of(const Replayer& r) {
  const DeviceState* best = nullptr;
  for (const auto& [d, s] : r.devices())
    if (s.peak_bytes && (!best || s.peak_bytes > best->peak_bytes)) best = &s;
  if (!best) return std::nullopt;
  return best->peak_time_ns;
}

EventFacts event_facts(const Trace& records, const EventSource& events, bool with_peak) {
  EventFacts f;
  f.known.end_ns = last_moment(records);
  std::optional<Replayer> r;
  if (with_peak) r.emplace(records.granule());
  uint64_t previous = 0;
  events.scan([&](const Event& e, size_t i) {
    if ((i & 0xfff) == 0) progress("reading", i, events.size());
    if (i > 0 && e.time_ns < previous) f.in_time_order = false;
    previous = e.time_ns;
    f.known.end_ns = std::max(f.known.end_ns, e.time_ns);
    if (r) r->apply(e, i);
  });
  if (r) f.known.peak_ns = peak_moment_of(*r);
  return f;
}

std::optional<uint64_t> peak_moment_between(const Trace& records, const EventSource& events, uint64_t from_ns,
                                            uint64_t to_ns) {
  Replayer r(records.granule());
  uint64_t best = 0;
  std::optional<uint64_t> at;
  bool opened = false;
  // What is live at `from_ns` (its own events applied, as `live --at` counts) is the
  // window's first candidate, read before the first event after it.
  const auto open = [&] {
    opened = true;
    for (const auto& [d, s] : r.devices())
      if (s.device_bytes > best) best = s.device_bytes, at = from_ns;
  };
  events.scan([&](const Event& e, size_t i) {
    if (!opened && e.time_ns > from_ns) open();
    r.apply(e, i);
    if (e.time_ns <= from_ns || e.time_ns > to_ns) return;
    const auto it = r.devices().find(e.device);
    if (it != r.devices().end() && it->second.device_bytes > best) best = it->second.device_bytes, at = e.time_ns;
  });
  if (!opened) open();
  return at;
}

std::optional<uint64_t> parse_moment(const std::string& text, const Trace& trace, std::string& error,
                                     const KnownMoments* known) {
  const std::string s = trimmed(text);
  if (s.empty()) {
    error = "--at wants a moment, not an empty value";
    return std::nullopt;
  }
  if (s == "end") return known ? known->end_ns : last_moment(trace);
  if (s == "peak") {
    if (auto p = known ? known->peak_ns : peak_moment(trace)) return p;
    error = "--at peak: no device memory was ever live in this trace";
    return std::nullopt;
  }
  if (s.front() == '-') {
    error = "--at wants a moment at or after the start, not '" + s + "'";
    return std::nullopt;
  }
  if (s.back() == 's') {
    std::string num = trimmed(s.substr(0, s.size() - 1));
    double secs = 0;
    const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), secs, std::chars_format::fixed);
    if (ec != std::errc() || p != num.data() + num.size() || num.empty() ||
        !(secs >= 0 && secs <= 1.8e10)) {  // NaN fails
      error = "--at wants seconds since the start like '12.345 s', not '" + s + "'";
      return std::nullopt;
    }
    const uint64_t start = trace.process ? trace.process->start_monotonic_ns : 0;
    return start + static_cast<uint64_t>(secs * 1e9 + 0.5);
  }
  uint64_t ns = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), ns);
  if (ec != std::errc() || p != s.data() + s.size()) {
    error = "--at wants nanoseconds on CLOCK_MONOTONIC, seconds since the start ('12.345 s'), 'peak' or 'end', not '" +
            s + "'";
    return std::nullopt;
  }
  return ns;
}

}  // namespace cumemtrace
