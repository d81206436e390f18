// The moments `cumemtrace live --at` accepts: what the text report prints ("12.345 s" or
// "12.345s": seconds since the trace started), "peak" (the moment of the highest peak
// of any device), "end" (the last moment in the trace), or absolute CLOCK_MONOTONIC
// nanoseconds. Anything else, a negative number or an empty value is an error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "read/reader.h"
#include "replay/replay.h"

namespace cumemtrace {

// "end" and "peak" of a whole trace, worked out beforehand (the checkpoint index keeps
// them: checkpoint.h), for a `trace` that holds only part of the events.
struct KnownMoments {
  uint64_t end_ns = 0;
  std::optional<uint64_t> peak_ns;
};

// "peak" after a replay of every event: the time of the highest peak of any device, or
// nullopt when no device memory was ever live. "end" of `trace` without its events, and
// with them when they are there (the index reads them chunk by chunk: it takes the max
// with the latest event's time itself).
std::optional<uint64_t> peak_moment_of(const Replayer& whole);
uint64_t last_moment(const Trace& trace);

// What `live` needs of a trace whose events it does not hold (event_source.h), from one
// pass over them: "end", "peak" (only `with_peak`: it replays), and whether the events
// are in time order (then one replay answers every moment).
struct EventFacts {
  KnownMoments known;
  bool in_time_order = true;
};
EventFacts event_facts(const Trace& records, const EventSource& events, bool with_peak);

// A flame graph over a window (`export --format folded --from A --to B`): the first
// moment in [from_ns, to_ns] at which a device's tracked bytes were the highest any device
// reached in the window, as `live --at` counts them (a moment's own events applied):
// `from_ns` itself when nothing after it rose higher; nullopt when no device memory was
// live in the window. Events are replayed in file order, those outside the window too
// (they pair the frees inside it); only those inside are moments.
std::optional<uint64_t> peak_moment_between(const Trace& records, const EventSource& events, uint64_t from_ns,
                                            uint64_t to_ns);

// The moment in ns, or nullopt with `error` saying why `text` is not one.
std::optional<uint64_t> parse_moment(const std::string& text, const Trace& trace, std::string& error,
                                     const KnownMoments* known = nullptr);

}  // namespace cumemtrace
