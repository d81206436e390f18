#include "reports/oom/holders.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace cumemtrace {

using format::kUnknown64;

namespace {

// Search only this many holders (the largest releasable ones): a set of k holders that
// fits can always be made of the k largest, so the fewest count is never missed.
constexpr size_t kSearched = 14;

// The ranking's tie-break: the cheapest to release first. Contexts come last: the process's
// own context goes only when the process stops using the device.
int rank(HolderKind k) {
  switch (k) {
    case HolderKind::kPoolSlack: return 0;
    case HolderKind::kGraphPool: return 1;
    case HolderKind::kCache: return 2;
    case HolderKind::kOtherProcesses: return 3;
    case HolderKind::kUntracked: return 4;
    case HolderKind::kCacheInUse: return 5;
    case HolderKind::kLive: return 6;
    case HolderKind::kContexts: return 7;
    case HolderKind::kRounding: return 8;
  }
  return 9;
}

}  // namespace

std::string holder_key(const Holder& h) {
  switch (h.kind) {
    case HolderKind::kPoolSlack: return "pool_slack";
    case HolderKind::kGraphPool: return "graph_pool";
    case HolderKind::kCache: return "cache:" + h.owner;
    case HolderKind::kOtherProcesses: return "other_processes";
    case HolderKind::kContexts: return "contexts";
    case HolderKind::kUntracked: return "untracked";
    case HolderKind::kCacheInUse: return "cache_in_use:" + h.owner;
    case HolderKind::kLive: return "live:" + h.owner;
    case HolderKind::kRounding: return "rounding";
  }
  return "?";
}

std::string holder_name(const Holder& h) {
  switch (h.kind) {
    case HolderKind::kPoolSlack: return "the stream-ordered pool's slack";
    case HolderKind::kGraphPool: return "the CUDA graph memory pool";
    case HolderKind::kCache: return h.owner + "'s cache";
    case HolderKind::kOtherProcesses: return "other processes (" + h.owner + ")";
    case HolderKind::kContexts: return "contexts";
    case HolderKind::kUntracked: return "untracked";
    case HolderKind::kCacheInUse: return h.owner + "'s segments split by blocks in use";
    case HolderKind::kLive: return "live allocations from " + h.owner;
    case HolderKind::kRounding: return "granule rounding and gaps";
  }
  return "?";
}

bool releasable(HolderKind k) { return k != HolderKind::kRounding; }
bool is_live(HolderKind k) { return k == HolderKind::kLive; }

std::vector<Holder> failure_holders(const HolderFacts& f, const CachingAllocators& owners) {
  std::vector<Holder> out;
  // Live allocations by owner: a block map's joined segments are its allocator's (in use
  // or not), the rest by their stacks.
  std::unordered_map<uint64_t, bool> in_use;
  if (f.map_segments)
    for (const auto& [address, busy] : *f.map_segments) in_use[address] = busy;
  std::map<std::pair<HolderKind, std::string>, Holder> live;
  uint64_t live_bytes = 0;
  if (f.live)
    for (const auto& a : *f.live) {
      if (!format::holds_device_memory(a.kind)) continue;
      live_bytes += a.size;
      Holder h;
      if (auto it = in_use.find(a.address); it != in_use.end() && a.address) {
        h = {it->second ? HolderKind::kCacheInUse : HolderKind::kCache, f.map_allocator};
      } else if (const std::string& cache = owners.of(a.stack_id); !cache.empty()) {
        h = {HolderKind::kCache, cache};
      } else {
        h = {HolderKind::kLive, owners.stacks().call_site(a.stack_id).library};
      }
      Holder& g = live.try_emplace({h.kind, h.owner}, h).first->second;
      g.bytes += a.size;
      ++g.count;
    }
  std::vector<Holder> by_owner;
  for (auto& [key, h] : live) by_owner.push_back(std::move(h));
  std::stable_sort(by_owner.begin(), by_owner.end(), [](const Holder& a, const Holder& b) {
    return a.kind != b.kind ? rank(a.kind) < rank(b.kind) : a.bytes > b.bytes;
  });

  const uint64_t slack =
      f.pool_reserved != kUnknown64 && f.pool_reserved > f.async_live ? f.pool_reserved - f.async_live : 0;
  const uint64_t graph = f.graph_pool != kUnknown64 ? f.graph_pool : 0;
  out.push_back({HolderKind::kPoolSlack, "", slack, 0});
  out.push_back({HolderKind::kGraphPool, "", graph, 0});
  Holder others{HolderKind::kOtherProcesses, "", 0, 0};
  for (const auto& p : f.other_processes) {
    if (p.used_bytes == kUnknown64) continue;
    others.owner += (others.count++ ? ", pid " : "pid ") + std::to_string(p.pid);
    others.bytes += p.used_bytes;
  }
  out.push_back(std::move(others));
  out.push_back({HolderKind::kContexts, "", f.contexts, 0});
  if (f.process_used != kUnknown64) {
    const uint64_t accounted = f.footprint + f.contexts + slack + graph;
    out.push_back({HolderKind::kUntracked, "", f.process_used > accounted ? f.process_used - accounted : 0, 0});
  }
  for (auto& h : by_owner) out.push_back(std::move(h));
  out.push_back({HolderKind::kRounding, "", f.footprint > live_bytes ? f.footprint - live_bytes : 0, 0});
  std::erase_if(out, [](const Holder& h) { return h.bytes == 0; });
  std::stable_sort(out.begin(), out.end(),
                   [](const Holder& a, const Holder& b) { return rank(a.kind) < rank(b.kind); });
  return out;
}

std::vector<Release> fewest_holders(const std::vector<Holder>& holders, uint64_t device_free, uint64_t request,
                                    size_t max) {
  if (device_free == kUnknown64) return {};
  const uint64_t need = request > device_free ? request - device_free : 0;
  std::vector<size_t> pool;
  for (size_t i = 0; i < holders.size(); ++i)
    if (releasable(holders[i].kind)) pool.push_back(i);
  std::stable_sort(pool.begin(), pool.end(), [&](size_t a, size_t b) { return holders[a].bytes > holders[b].bytes; });
  if (pool.size() > kSearched) pool.resize(kSearched);
  std::vector<Release> fits;
  for (size_t k = 1; k <= pool.size() && fits.empty(); ++k) {
    // Every k-subset of `pool`, by a bitmask with k bits set.
    for (uint32_t mask = (1u << k) - 1; mask < (1u << pool.size());) {
      Release r;
      for (size_t b = 0; b < pool.size(); ++b)
        if (mask & (1u << b)) r.holders.push_back(pool[b]), r.released += holders[pool[b]].bytes;
      if (r.released >= need) {
        std::sort(r.holders.begin(), r.holders.end());
        fits.push_back(std::move(r));
      }
      const uint32_t low = mask & -mask, ripple = mask + low;  // the next mask with as many bits set
      mask = (((ripple ^ mask) >> 2) / low) | ripple;
    }
  }
  // Cheapest kinds first (holders come ranked, so index order is rank order), then most bytes.
  std::sort(fits.begin(), fits.end(), [&](const Release& a, const Release& b) {
    std::vector<int> ka, kb;
    for (size_t i : a.holders) ka.push_back(rank(holders[i].kind));
    for (size_t i : b.holders) kb.push_back(rank(holders[i].kind));
    return ka != kb ? ka < kb : a.released > b.released;
  });
  if (fits.size() > max) fits.resize(max);
  return fits;
}

}  // namespace cumemtrace
