#include "stacks/walk_stats.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <string>

#include "base/config.h"
#include "base/log.h"

namespace cumemtrace::interpose {
namespace {

struct Totals {
  std::atomic<uint64_t> walks{0}, cycles{0}, frames{0};
  std::atomic<uint64_t> by_log2[32]{};  // counts by log2 of their cycles
};
// Short walks (at most 16 frames) apart from long ones: a cost a frame shows in the
// difference, a cost a walk in both alike.
Totals fast_short, fast_long, slow;

// The distinct frames the fast trace stopped at, first come first kept: a process has few
// (each is one function's unwind rule), and a full table only loses the names, not counts.
constexpr int kStops = 16;
std::atomic<uint64_t> stop_ip[kStops];
std::atomic<uint64_t> stop_count[kStops];

void add(Totals& t, uint64_t cycles, uint32_t frames) {
  t.walks.fetch_add(1, std::memory_order_relaxed);
  t.cycles.fetch_add(cycles, std::memory_order_relaxed);
  t.frames.fetch_add(frames, std::memory_order_relaxed);
  const int bucket = cycles ? std::min(31, 63 - __builtin_clzll(cycles)) : 0;
  t.by_log2[bucket].fetch_add(1, std::memory_order_relaxed);
}

void count_stop(uint64_t ip) {
  for (int i = 0; i < kStops; ++i) {
    uint64_t seen = stop_ip[i].load(std::memory_order_relaxed);
    if (seen == 0 && stop_ip[i].compare_exchange_strong(seen, ip)) seen = ip;
    if (seen == ip) {
      stop_count[i].fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
}

// `frames`: a walk's line says how many frames it walked, a part's does not.
void say(const char* what, const Totals& t, bool frames) {
  const uint64_t n = t.walks.load();
  if (n == 0) return;
  if (frames)
    log_warn("stack stats: {} walks {}: {:.1f} frames, {} cycles a walk", n, what, double(t.frames.load()) / n,
             t.cycles.load() / n);
  else log_warn("stack stats: {} {}: {} cycles each", n, what, t.cycles.load() / n);
  std::string histogram;
  for (int b = 0; b < 32; ++b)
    if (const uint64_t k = t.by_log2[b].load()) histogram += fmt::format(" {}:{}", uint64_t(1) << b, k);
  log_warn("stack stats:   by cycles (at least):{}", histogram);
}

Totals parts[int(HookPart::kCount)];
constexpr const char* kPartNames[] = {"Python walks",
                                      "native walks (all)",
                                      "block events, under the tracker's lock",
                                      "block events, whole (stacks, lock, record)",
                                      "usage reports (PyTorch's own function included)",
                                      "trace entries, whole",
                                      "block events, waiting for the tracker's lock",
                                      "block events, reading the clock (CLOCK_MONOTONIC)",
                                      "block events, checked against the driver's memory",
                                      "block events, interning the stacks",
                                      "block events, encoding the record",
                                      "events whose stacks were among the thread's recent ones, interning"};
static_assert(std::size(kPartNames) == size_t(HookPart::kCount));

}  // namespace

void hook_part_add(HookPart part, uint64_t cycles) { add(parts[int(part)], cycles, 0); }

bool walk_stats_on() { return config().stack_stats; }

void walk_stats_add(uint64_t cycles, uint32_t frames, bool was_slow, uint64_t ip) {
  add(was_slow ? slow : frames <= 16 ? fast_short : fast_long, cycles, frames);
  if (was_slow) count_stop(ip);
}

void walk_stats_report() {
  if (!walk_stats_on()) return;
  say("by the fast trace, at most 16 frames", fast_short, true);
  say("by the fast trace, more than 16 frames", fast_long, true);
  say("again by DWARF steps (the fast trace stopped)", slow, true);
  for (int i = 0; i < int(HookPart::kCount); ++i) say(kPartNames[i], parts[i], false);
  for (int i = 0; i < kStops; ++i) {
    const uint64_t ip = stop_ip[i].load();
    if (ip == 0) break;
    Dl_info info{};
    const bool known = dladdr(reinterpret_cast<void*>(ip), &info) != 0;
    log_warn("stack stats: stopped {} times at {}+0x{:x} ({})", stop_count[i].load(),
             known && info.dli_fname ? info.dli_fname : "?", known ? ip - uint64_t(info.dli_fbase) : ip,
             known && info.dli_sname ? info.dli_sname : "no symbol");
  }
}

}  // namespace cumemtrace::interpose
