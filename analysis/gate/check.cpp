#include "gate/check.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "stacks/call_site_rule.h"
#include "base/size_parse.h"
#include "base/units.h"

namespace cumemtrace {
namespace {

std::string fixed4(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4f", v);
  return b;
}

// "from libX (function), libY (...)": the call sites a user would look at first.
std::string blame(const std::vector<SiteRow>& rows, size_t n = 3) {
  std::string s;
  for (size_t i = 0; i < rows.size() && i < n; ++i) {
    const SiteRow& r = rows[i];
    s += (i ? ", " : "; top call sites: ") + iec(r.bytes) + " from " + r.library;
    const std::string site = user_frame_text(r.frames, r.python_frames, r.caller.text);
    if (!site.empty()) s += " (" + site + ")";
  }
  return s;
}

// The largest successful allocation holding device memory, per device, with its call site.
struct Single {
  uint64_t bytes = 0;
  uint32_t stack = 0;
};
std::map<int32_t, Single> largest_singles(const EventSource& events) {
  std::map<int32_t, Single> out;
  events.scan([&](const Event& e, size_t) {
    if (e.op != format::Op::kAlloc || e.result != 0 || (e.flags & format::kEventCaptured) ||
        !format::holds_device_memory(e.kind))
      return;
    Single& s = out[e.device];
    if (e.size > s.bytes) s = {e.size, e.stack_id};
  });
  return out;
}

}  // namespace

std::string_view limit_name(Limit::What what) {
  switch (what) {
    case Limit::What::kPeak: return "max-peak";
    case Limit::What::kLeaked: return "max-leaked";
    case Limit::What::kFailed: return "max-failed";
    case Limit::What::kSingle: return "max-single";
    case Limit::What::kGapRatio: return "max-gap-ratio";
    case Limit::What::kGrowth: return "max-growth";
    case Limit::What::kPoolGrowth: return "max-pool-growth";
  }
  return "?";
}

std::optional<Limit> parse_limit(Limit::What what, std::string_view arg, std::string* error) {
  Limit l;
  l.what = what;
  l.text = std::string(arg);
  if (arg.size() > 2 && arg[0] == 'd' && std::isdigit(static_cast<unsigned char>(arg[1]))) {
    const size_t colon = arg.find(':');
    if (colon == std::string_view::npos) {
      if (error) *error = "'" + l.text + "': a device prefix is dN: (e.g. d0:2GiB)";
      return std::nullopt;
    }
    l.device = std::stoi(std::string(arg.substr(1, colon - 1)));
    arg = arg.substr(colon + 1);
  }
  const std::string v(arg);
  try {
    size_t used = 0;
    switch (what) {
      case Limit::What::kFailed: {
        if (v.empty() || v[0] == '-') throw std::invalid_argument(v);
        l.bytes = std::stoull(v, &used);
        if (used != v.size()) throw std::invalid_argument(v);
        return l;
      }
      case Limit::What::kGapRatio: {
        l.ratio = std::stod(v, &used);
        if (used != v.size() || l.ratio < 0 || l.ratio > 1) throw std::invalid_argument(v);
        return l;
      }
      case Limit::What::kSingle:
        if (v.ends_with('%')) {
          const double p = std::stod(v.substr(0, v.size() - 1), &used);
          if (used != v.size() - 1 || p < 0 || p > 100) throw std::invalid_argument(v);
          l.percent = p;
          return l;
        }
        [[fallthrough]];
      case Limit::What::kPeak:
      case Limit::What::kLeaked:
      case Limit::What::kGrowth:
      case Limit::What::kPoolGrowth: {
        const auto b = parse_size(v, error);
        if (!b) return std::nullopt;
        l.bytes = *b;
        return l;
      }
    }
  } catch (const std::exception&) {}
  if (error) {
    *error = what == Limit::What::kFailed     ? "'" + v + "' is not a count"
             : what == Limit::What::kGapRatio ? "'" + v + "' is not a ratio between 0 and 1"
                                              : "'" + v + "' is not a percentage between 0 and 100";
  }
  return std::nullopt;
}

bool TraceCheck::ok() const {
  return std::all_of(results.begin(), results.end(), [](const LimitResult& r) { return r.ok; });
}

namespace {

// Inside pools (pools.h): the steadiest growth of a pool's regions, a site classified `leak`,
// among the heaps on the limit's device (all heaps without "dN:"; a heap in no allocation
// the trace has is on none). Judged once per trace: a pool's regions are not device bytes.
LimitResult check_pool_growth(const Report& rep, const Limit& l) {
  LimitResult r;
  r.name = std::string(limit_name(l.what)) + (l.device ? " d" + std::to_string(*l.device) : "");
  const PoolHeap* heap = nullptr;
  const PoolSite* worst = nullptr;
  for (const PoolHeap& h : rep.pools.heaps) {
    if (l.device && (h.backing_size == 0 || h.device != *l.device)) continue;
    for (const PoolSite& s : h.sites)
      if (s.cls == GrowthSite::Class::kLeak && (!worst || s.growth_per_iteration > worst->growth_per_iteration))
        worst = &s, heap = &h;
  }
  const uint64_t measured = worst ? worst->growth_per_iteration : 0;
  r.ok = measured <= l.bytes;
  r.message = "growth per iteration inside pools" + (l.device ? " on device " + std::to_string(*l.device) : "") + ": " +
              iec_exact(measured) + ", limit " + iec_exact(l.bytes);
  if (rep.pools.heaps.empty()) r.message += " (no pool told NVTX about its heaps)";
  else if (rep.growth.by == IterationsBy::kNone) r.message += " (no iterations found)";
  if (!r.ok) {
    const std::string site = user_frame_text(worst->frames, worst->python_frames, worst->caller.text);
    r.message += "; leaking " + (worst->name.empty() ? std::string("unnamed") : "\"" + worst->name + "\"") +
                 " regions of heap " + (heap->name.empty() ? hex(heap->handle) : "\"" + heap->name + "\"") +
                 (site.empty() ? "" : " from " + site);
  }
  return r;
}

}  // namespace

TraceCheck check_trace(const Trace& trace, const EventSource& events, const Report& rep,
                       const std::vector<Limit>& limits) {
  TraceCheck tc;
  tc.path = rep.path;
  // A third read of the events, only when a limit needs it.
  const bool single =
      std::any_of(limits.begin(), limits.end(), [](const Limit& l) { return l.what == Limit::What::kSingle; });
  const auto singles = single ? largest_singles(events) : std::map<int32_t, Single>{};
  const Stacks stacks(trace);
  for (const auto& l : limits) {
    if (l.what == Limit::What::kPoolGrowth) {
      tc.results.push_back(check_pool_growth(rep, l));
      continue;
    }
    for (const auto& d : rep.devices) {
      if (d.device < 0 || (l.device && *l.device != d.device)) continue;
      LimitResult r;
      r.name = std::string(limit_name(l.what)) + " d" + std::to_string(d.device);
      const std::string where = "device " + std::to_string(d.device);
      switch (l.what) {
        case Limit::What::kPeak:
          r.ok = d.peak_bytes <= l.bytes;
          r.message = "peak on " + where + ": " + iec_exact(d.peak_bytes) + ", limit " + iec_exact(l.bytes) +
                      (r.ok ? "" : blame(d.top_sites));
          break;
        case Limit::What::kLeaked: {
          if (!rep.complete) {
            r.ok = false;
            r.message = "leaked on " + where +
                        ": unknown, the process did not end its trace cleanly (killed, "
                        "crashed, or the file is cut); live when the trace stops: " +
                        iec_exact(d.end_device_bytes);
            break;
          }
          // Possible leaks only: what a caching allocator's cache holds at exit is kept by design.
          r.ok = d.end_possible_leak_bytes <= l.bytes;
          std::vector<SiteRow> sites;
          for (const auto& g : rep.leaks)
            if (format::holds_device_memory(g.kind))
              for (const auto& s : g.sites)
                if (s.device == d.device) sites.push_back(s);
          std::sort(sites.begin(), sites.end(), [](const SiteRow& a, const SiteRow& b) { return a.bytes > b.bytes; });
          r.message = "leaked on " + where + ": " + iec_exact(d.end_possible_leak_bytes) + ", limit " +
                      iec_exact(l.bytes) +
                      (d.end_held_by_cache_bytes ? " (not counting " + iec_exact(d.end_held_by_cache_bytes) +
                                                       " held at exit by caches and libraries' handles)"
                                                 : "") +
                      (r.ok ? "" : blame(sites));
          break;
        }
        case Limit::What::kFailed: {
          // Failures the program recovered from are not counted unless asked (docs/cli.md,
          // "Recovered or fatal"); the first counted one is named.
          uint64_t n = 0, recovered = 0;
          const FailedRow* first = nullptr;
          for (const auto& f : rep.failed) {
            if (f.device != d.device) continue;
            if (f.recovered && !l.count_recovered) {
              ++recovered;
              continue;
            }
            n += 1, first = first ? first : &f;
          }
          r.ok = n <= l.bytes;
          r.message = "failed allocations on " + where + ": " + std::to_string(n) +
                      (l.count_recovered ? " (recovered ones counted)" : "") + ", limit " + std::to_string(l.bytes);
          if (recovered) r.message += " (not counting " + std::to_string(recovered) + " recovered from)";
          if (!r.ok && first) {
            const std::string site = user_frame_text(first->frames, first->python_frames, first->caller.text);
            r.message += "; first: " + iec_exact(first->size) + " from " + first->library +
                         (site.empty() ? "" : " (" + site + ")") + ", " +
                         std::string(cause_name(first->diagnosis.cause));
          }
          break;
        }
        case Limit::What::kSingle: {
          const auto s = singles.find(d.device);
          const uint64_t measured = s == singles.end() ? 0 : s->second.bytes;
          const uint64_t limit = l.percent ? uint64_t(*l.percent / 100.0 * double(d.total_bytes)) : l.bytes;
          r.ok = measured <= limit;
          r.message = "largest single allocation on " + where + ": " + iec_exact(measured) + ", limit " +
                      iec_exact(limit) + (l.percent ? " (" + l.text + " of " + iec_exact(d.total_bytes) + ")" : "");
          if (!r.ok) r.message += "; made from " + stacks.call_site(s->second.stack).library;
          break;
        }
        case Limit::What::kGrowth: {
          // The steadiest growth there is: a call site classified `leak` or `growing` (growth.h).
          const GrowthSite* worst = nullptr;
          for (const auto& s : rep.growth.sites)
            if (s.device == d.device && (s.cls == GrowthSite::Class::kLeak || s.cls == GrowthSite::Class::kGrowing) &&
                (!worst || s.growth_per_iteration > worst->growth_per_iteration))
              worst = &s;
          const uint64_t measured = worst ? worst->growth_per_iteration : 0;
          r.ok = measured <= l.bytes;
          r.message = "growth per iteration on " + where + ": " + iec_exact(measured) + ", limit " + iec_exact(l.bytes);
          if (rep.growth.by == IterationsBy::kNone) r.message += " (no iterations found)";
          if (!r.ok && worst) {
            const std::string site = user_frame_text(worst->frames, worst->python_frames, worst->caller.text);
            r.message +=
                (worst->cls == GrowthSite::Class::kLeak ? "; leaking from " : "; a growing need (not a leak) from ") +
                (worst->inside.empty() ? "" : "tensors inside " + worst->inside + "'s cache, ") + worst->library +
                (site.empty() ? "" : " (" + site + ")");
          }
          // What a cache did inside is not in every trace: the limit is judged on what was seen.
          for (const std::string& note : not_visible_notes(rep.blocks))
            r.unseen += (r.unseen.empty() ? "" : "; ") + note;
          if (!r.unseen.empty()) r.message += "; " + r.unseen;
          break;
        }
        case Limit::What::kPoolGrowth: break;  // judged once per trace, above
        case Limit::What::kGapRatio: {
          const double g = d.frag_at_peak.gap_ratio();
          r.ok = g <= l.ratio;
          r.message = "gap ratio at the peak on " + where + ": " + fixed4(g) + ", limit " + fixed4(l.ratio);
          break;
        }
      }
      tc.results.push_back(std::move(r));
    }
  }
  return tc;
}

}  // namespace cumemtrace
