#include "reports/sections/at_exit.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "reports/sections/site_sums.h"
#include "stacks/call_site_rule.h"

namespace cumemtrace {
namespace {

using format::Kind;

// Leaks in the order a reader wants them: what holds device memory, then managed,
// then host-pinned, then anything else.
int leak_rank(Kind k) {
  if (format::holds_device_memory(k)) return 0;
  if (k == Kind::kManaged) return 1;
  if (k == Kind::kHostPinned) return 2;
  return 3;
}

}  // namespace

void split_at_exit(const Replayer& end, Report& rep, const Stacks& stacks, const ReportOptions& opt,
                   const CallerNames& names) {
  const CachingAllocators owners(stacks);
  // growth's `leak` sites, as growth keys them (call_site_rule.h): (key, from Python, device, kind)
  std::set<std::tuple<uint64_t, bool, int32_t, int>> leaking;
  // (a site of blocks inside a cache is not: its segments are the cache's either way)
  for (const auto& g : rep.growth.sites)
    if (g.cls == GrowthSite::Class::kLeak && g.inside.empty())
      leaking.insert({g.key, g.from_python, g.device, int(g.kind)});
  struct Group {
    explicit Group(const Stacks& stacks) : sites(stacks) {}
    uint64_t bytes = 0, count = 0;
    SiteSums sites;
    void add(const LiveAlloc& a) { bytes += a.size, count += 1, sites.add(a); }
  };
  std::map<std::pair<int, int>, Group> by_kind;
  std::map<std::string, Group> by_cache;
  std::map<int32_t, uint64_t> held;
  const UserSites users(stacks);
  std::set<std::string> handle_owners;                   // the names in by_cache that are libraries' handles
  std::unordered_map<uint32_t, std::string> handles_of;  // per stack: many live allocations share one
  end.for_each_live([&](const LiveAlloc& a) {
    std::string cache = format::holds_device_memory(a.kind) ? owners.of(a.stack_id) : std::string();
    if (cache.empty() && format::holds_device_memory(a.kind)) {
      auto [it, fresh] = handles_of.try_emplace(a.stack_id);
      if (fresh) it->second = library_handle_owner(stacks.call_site(a.stack_id).library);
      cache = it->second;
      if (!cache.empty()) handle_owners.insert(cache);
    }
    const UserSite site = cache.empty() ? UserSite{} : users.of(a.stack_id, a.python_stack_id);
    if (!cache.empty() && !leaking.count({site.key, site.from_python, a.device, int(a.kind)})) {
      by_cache.try_emplace(cache, stacks).first->second.add(a);
      held[a.device] += a.size;
    } else {
      by_kind.try_emplace({leak_rank(a.kind), int(a.kind)}, stacks).first->second.add(a);
      cache.clear();
    }
    if (rep.ipc.live_at_end.count(a.address))  // where an export was counted: job.h may move it
      rep.ipc.counted_at_end(a, cache, users.of(a.stack_id, a.python_stack_id).node);
  });
  const auto group = [&](Group& sums, Kind kind, std::string allocator) {
    LeakGroup g;
    g.kind = kind;
    g.allocator = std::move(allocator);
    g.bytes = sums.bytes, g.count = sums.count;
    g.sites = std::move(sums.sites).rows();
    g.sites_omitted = keep_top(g.sites, stacks, opt, names);
    return g;
  };
  for (auto& [key, sums] : by_kind) rep.leaks.push_back(group(sums, static_cast<Kind>(key.second), ""));
  for (auto& [name, sums] : by_cache) {
    rep.held_by_cache.push_back(group(sums, Kind::kDevice, name));
    rep.held_by_cache.back().library_handles = handle_owners.count(name) > 0;
  }
  for (auto& d : rep.devices) {
    d.end_held_by_cache_bytes = std::min(held[d.device], d.end_device_bytes);
    d.end_possible_leak_bytes = d.end_device_bytes - d.end_held_by_cache_bytes;
  }
}

}  // namespace cumemtrace
