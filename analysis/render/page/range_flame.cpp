// The page's flame graph over a time range: range_flame.h says what is written.
#include "render/page/range_flame.h"

#include <map>

namespace cumemtrace {

using Json = nlohmann::ordered_json;

Json range_flame_json(const RangeFlame& flames, const PathOf& path_of) {
  std::map<std::vector<uint32_t>, uint32_t> path_index;
  std::vector<const std::vector<uint32_t>*> paths;
  const auto path_id = [&](const std::vector<uint32_t>& labels) {
    auto [it, fresh] = path_index.emplace(labels, uint32_t(paths.size()));
    if (fresh) paths.push_back(&it->first);
    return it->second;
  };
  // Each bucket's live bytes by path; a bucket that shares its moment with an earlier one
  // of its device reads that one's.
  std::map<int32_t, std::vector<std::map<uint32_t, uint64_t>>> live;
  for (const auto& [d, buckets] : flames.devices()) live[d].resize(buckets.size());
  for (size_t stop : flames.stops())
    for (const auto& [d, buckets] : flames.devices()) {
      const std::map<uint32_t, uint64_t>* first = nullptr;
      for (size_t i = 0; i < buckets.size(); ++i) {
        if (buckets[i].moment.event != stop) continue;
        std::map<uint32_t, uint64_t>& out = live[d][i];
        if (first) {
          out = *first;
          continue;
        }
        for (const StackBytes& s : buckets[i].live) out[path_id(path_of(s.stack_id, s.python_stack_id))] += s.bytes;
        first = &out;
      }
    }

  Json jpaths = Json::array();
  for (const std::vector<uint32_t>* p : paths) jpaths.push_back(*p);
  Json devices = Json::array();
  for (const auto& [d, buckets] : flames.devices()) {
    Json out = Json::array();
    const std::map<uint32_t, uint64_t>* before = nullptr;
    static const std::map<uint32_t, uint64_t> kNone;
    for (size_t i = 0; i < buckets.size(); ++i) {
      const RangeFlame::Bucket& b = buckets[i];
      const std::map<uint32_t, uint64_t>& now = live[d][i];
      const std::map<uint32_t, uint64_t>& prev = before ? *before : kNone;
      Json change = Json::array();
      for (const auto& [p, bytes] : now)
        if (auto it = prev.find(p); it == prev.end() || it->second != bytes)
          change.push_back(p), change.push_back(bytes);
      for (const auto& [p, bytes] : prev)
        if (!now.count(p)) change.push_back(p), change.push_back(0);
      out.push_back(Json::array({b.k, b.moment.t, b.moment.tracked, change}));
      before = &now;
    }
    devices.push_back(Json{{"device", d}, {"buckets", std::move(out)}});
  }
  return Json{{"start_ns", flames.start()},
              {"bucket_ns", flames.bucket_ns()},
              {"buckets", flames.buckets()},
              {"paths", std::move(jpaths)},
              {"devices", std::move(devices)}};
}

}  // namespace cumemtrace
