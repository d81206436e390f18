#include "gate/baseline.h"

#include <algorithm>

#include "base/escape.h"
#include "stacks/call_site_rule.h"

namespace cumemtrace {
namespace {

// The frame the call-site rule names the row by (call_site_rule.h), then the caller that
// tells it from rows of the same frame.
std::string key_of(const SiteRow& row) {
  // A Python line is what its author knows the allocation by, and it stays the same when
  // a framework's native frames move between versions (trace 1.6).
  if (const Frame* p = user_python_frame(row.python_frames))
    return "python " + source_key(p->file) + ":" + p->function + ":" + std::to_string(p->line) + row.caller.key;
  if (row.frames.empty()) return row.library + " (no stack)";
  const Frame& f = row.frames.front();
  if (f.function.empty())
    return (f.module.empty() ? row.library + " " + describe(f, FrameStyle::kName) : describe(f, FrameStyle::kName)) +
           row.caller.key;
  std::string key = row.library + " " + f.function;
  if (!f.file.empty()) key += " " + source_key(f.file) + ":" + std::to_string(f.line);
  return key + row.caller.key;
}

}  // namespace

// Escaped when made, not when written: a baseline file and a trace read later must give
// one key for one site, and the file is JSON.
std::string site_key(const SiteRow& row) { return utf8_escaped(key_of(row)); }

Baseline baseline_of(const std::vector<Report>& reports) {
  Baseline b;
  for (const auto& rep : reports) {
    for (const auto& d : rep.devices) {
      if (d.device < 0) continue;
      auto& dev = b.devices[d.device];
      dev.peak = std::max(dev.peak, d.peak_bytes);
      dev.leaked += d.end_possible_leak_bytes;  // a cache's bytes at exit are no leak
      dev.held_by_cache += d.end_held_by_cache_bytes;
      for (const auto& s : d.top_sites) b.sites[{site_key(s), d.device}].bytes_at_peak += s.bytes;
    }
    for (const auto& f : rep.failed) b.devices[f.device].failed += 1;
    for (const auto& g : rep.leaks)
      if (format::holds_device_memory(g.kind))
        for (const auto& s : g.sites) b.sites[{site_key(s), s.device}].leaked += s.bytes;
  }
  return b;
}

nlohmann::ordered_json to_json(const Baseline& b) {
  nlohmann::ordered_json j;
  j["format"] = "cumemtrace-baseline";
  j["version"] = 1;
  nlohmann::ordered_json devs = nlohmann::ordered_json::object();
  for (const auto& [d, v] : b.devices)
    devs[std::to_string(d)] = {
        {"peak", v.peak}, {"leaked", v.leaked}, {"failed", v.failed}, {"held_by_cache_at_exit", v.held_by_cache}};
  j["devices"] = std::move(devs);
  nlohmann::ordered_json sites = nlohmann::ordered_json::array();
  for (const auto& [k, v] : b.sites)
    sites.push_back({{"key", k.first}, {"device", k.second}, {"bytes_at_peak", v.bytes_at_peak}, {"leaked", v.leaked}});
  j["call_sites"] = std::move(sites);
  return j;
}

std::optional<Baseline> baseline_from_json(const nlohmann::json& j, std::string* error) {
  try {
    if (j.at("format") != "cumemtrace-baseline" || j.at("version") != 1) {
      if (error) *error = "not a cumemtrace baseline of version 1";
      return std::nullopt;
    }
    Baseline b;
    for (const auto& [d, v] : j.at("devices").items())
      b.devices[std::stoi(d)] = {v.at("peak").get<uint64_t>(), v.at("leaked").get<uint64_t>(),
                                 v.at("failed").get<uint64_t>(), v.value("held_by_cache_at_exit", uint64_t(0))};
    for (const auto& s : j.at("call_sites"))
      b.sites[{s.at("key").get<std::string>(), s.at("device").get<int32_t>()}] = {s.at("bytes_at_peak").get<uint64_t>(),
                                                                                  s.at("leaked").get<uint64_t>()};
    return b;
  } catch (const std::exception& e) {
    if (error) *error = std::string("malformed baseline: ") + e.what();
    return std::nullopt;
  }
}

std::string_view change_name(SiteChange::Kind k) {
  switch (k) {
    case SiteChange::Kind::kNew: return "new";
    case SiteChange::Kind::kGone: return "gone";
    case SiteChange::Kind::kGrew: return "grew";
    case SiteChange::Kind::kShrank: return "shrank";
  }
  return "?";
}

std::vector<SiteChange> diff_sites(const Baseline& before, const Baseline& after) {
  std::vector<SiteChange> out;
  auto add = [&](const std::pair<std::string, int32_t>& k, const Baseline::Site* b, const Baseline::Site* a) {
    SiteChange c;
    c.key = k.first;
    c.device = k.second;
    if (b) c.before = *b;
    if (a) c.after = *a;
    if (!b) c.kind = SiteChange::Kind::kNew;
    else if (!a) c.kind = SiteChange::Kind::kGone;
    else if (c.change() > 0) c.kind = SiteChange::Kind::kGrew;
    else if (c.change() < 0) c.kind = SiteChange::Kind::kShrank;
    else return;
    out.push_back(std::move(c));
  };
  for (const auto& [k, v] : before.sites) {
    const auto it = after.sites.find(k);
    add(k, &v, it == after.sites.end() ? nullptr : &it->second);
  }
  for (const auto& [k, v] : after.sites)
    if (!before.sites.count(k)) add(k, nullptr, &v);
  std::stable_sort(out.begin(), out.end(), [](const SiteChange& x, const SiteChange& y) {
    return std::llabs(x.change()) > std::llabs(y.change());
  });
  return out;
}

}  // namespace cumemtrace
