#include "replay/checkpoint.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "cumemtrace/checksum.h"
#include "replay/live_time.h"
#include "base/progress.h"

namespace cumemtrace {
// Named, not anonymous: a type here is a member of the file's public class, which a batched
// (unity) build would otherwise warn about (-Wsubobject-linkage).
namespace checkpoint_impl {

constexpr char kMagic[8] = {'C', 'U', 'M', 'T', 'I', 'D', 'X', '2'};
// Version 1 named its trace by the first 64 KiB only, so a change further in went unseen.
constexpr char kMagicV1[8] = {'C', 'U', 'M', 'T', 'I', 'D', 'X', '1'};
constexpr size_t kFixedHeader = 8 + 3 * 8;
constexpr size_t kSealBytes = ChunkHasher::kSealBytes;

// Little-endian values appended to a string; Source reads them back, bounds-checked: a
// damaged index turns `ok` false and reads zeros, never past the end.
struct Sink {
  std::string s;
  template <class T>
  void put(T v) {
    s.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& v) {
    put(uint64_t(v.size()));
    s += v;
  }
};

struct Source {
  const char* p;
  size_t n;
  size_t pos = 0;
  bool ok = true;
  template <class T>
  T get() {
    T v{};
    if (n - pos < sizeof v) {
      ok = false;
      pos = n;
      return v;
    }
    std::memcpy(&v, p + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
  std::string str() {
    const uint64_t k = get<uint64_t>();
    if (k > n - pos) {
      ok = false;
      pos = n;
      return {};
    }
    std::string v(p + pos, k);
    pos += k;
    return v;
  }
  // A count of entries of at least `min_bytes` each: larger than what is left is damage.
  uint64_t count(size_t min_bytes) {
    const uint64_t k = get<uint64_t>();
    if (k > (n - pos) / min_bytes) {
      ok = false;
      pos = n;
      return 0;
    }
    return k;
  }
};

uint64_t hash(std::span<const uint8_t> b) { return XXH3_64bits(b.data(), b.size()); }

// The whole file, not a part: a byte changed anywhere between two checkpoints or after the
// last would otherwise go unseen, and `live` would answer from the old state without a word
// (the attack on the index). XXH3 reads ~1 GB in a few tenths of a second, which the
// second `live` reads from the page cache: far below replaying it.
uint64_t trace_hash(std::span<const uint8_t> trace) { return hash(trace); }

void put_alloc(Sink& o, const LiveAlloc& a) {
  o.put(a.address), o.put(a.size), o.put(a.handle), o.put(a.time_ns), o.put(a.stack_id), o.put(a.tid);
  o.put(a.device), o.put(a.api), o.put(uint8_t(a.kind)), o.put(a.python_stack_id);
}
LiveAlloc get_alloc(Source& in) {
  LiveAlloc a;
  a.address = in.get<uint64_t>(), a.size = in.get<uint64_t>(), a.handle = in.get<uint64_t>();
  a.time_ns = in.get<uint64_t>(), a.stack_id = in.get<uint32_t>(), a.tid = in.get<uint32_t>();
  a.device = in.get<int32_t>(), a.api = in.get<uint16_t>(), a.kind = format::Kind(in.get<uint8_t>());
  a.python_stack_id = in.get<uint32_t>();
  return a;
}
constexpr size_t kAllocBytes = 8 * 4 + 4 * 3 + 2 + 1 + 4;

constexpr size_t kCountFields = 14;
uint64_t* count_fields(DeviceCounts& c, size_t i) {
  uint64_t* f[kCountFields] = {&c.allocs,    &c.frees,        &c.failed,        &c.unknown_frees, &c.maps,
                               &c.unmaps,    &c.reserves,     &c.reserve_frees, &c.pool_trims,    &c.contexts,
                               &c.anomalies, &c.graph_allocs, &c.shares,        &c.imports};
  return f[i];
}
static_assert(sizeof(DeviceCounts) == kCountFields * sizeof(uint64_t), "a DeviceCounts field is not checkpointed");

// What `live` reads of the whole trace (checkpoint.h): no events, no snapshots.
void put_meta(Sink& o, const Trace& t) {
  o.put(t.version_major), o.put(t.version_minor), o.put(uint8_t(t.sealed));
  o.put(uint8_t(t.process.has_value()));
  if (const auto& p = t.process) {
    o.put(p->pid), o.put(p->ppid), o.put(p->start_monotonic_ns), o.put(p->start_realtime_ns);
    o.put(p->granule_bytes), o.put(p->stack_depth), o.put(p->rank), o.put(p->local_rank), o.put(p->world_size);
    o.str(p->hostname), o.str(p->tool_version);
    o.put(uint64_t(p->argv.size()));
    for (const auto& a : p->argv) o.str(a);
    o.put(uint64_t(p->launcher.size()));
    for (const auto& [k, v] : p->launcher) o.str(k), o.str(v);
  }
  o.put(uint64_t(t.devices.size()));
  for (const auto& d : t.devices) {
    o.put(d.ordinal), o.put(d.nvml_index), o.put(d.total_bytes);
    o.s.append(reinterpret_cast<const char*>(d.uuid), sizeof d.uuid);
    o.str(d.name);
  }
  o.put(uint64_t(t.modules.size()));
  for (const auto& m : t.modules) o.put(m.load_bias), o.put(m.start), o.put(m.end), o.str(m.path), o.str(m.build_id);
  o.put(uint64_t(t.api_names.size()));
  for (const auto& [id, name] : t.api_names) o.put(id), o.str(name);
  o.put(uint64_t(t.stack_nodes.size()));
  for (const auto& [id, n] : t.stack_nodes) o.put(n.id), o.put(n.parent), o.put(n.ip);
  o.put(uint64_t(t.symbols.size()));
  for (const auto& [ip, s] : t.symbols) o.put(s.ip), o.put(s.line), o.str(s.function), o.str(s.file);
}

void get_meta(Source& in, Trace& t) {
  t.header_ok = true;
  t.version_major = in.get<uint16_t>(), t.version_minor = in.get<uint16_t>(), t.sealed = in.get<uint8_t>();
  if (in.get<uint8_t>()) {
    ProcessInfo p;
    p.pid = in.get<uint32_t>(), p.ppid = in.get<uint32_t>(), p.start_monotonic_ns = in.get<uint64_t>();
    p.start_realtime_ns = in.get<uint64_t>(), p.granule_bytes = in.get<uint64_t>(), p.stack_depth = in.get<uint32_t>();
    p.rank = in.get<int32_t>(), p.local_rank = in.get<int32_t>(), p.world_size = in.get<int32_t>();
    p.hostname = in.str(), p.tool_version = in.str();
    for (uint64_t k = in.count(8); k--;) p.argv.push_back(in.str());
    for (uint64_t k = in.count(16); k--;) {
      std::string name = in.str();
      p.launcher.emplace_back(std::move(name), in.str());
    }
    t.process = std::move(p);
  }
  for (uint64_t k = in.count(40); k--;) {
    DeviceInfo d;
    d.ordinal = in.get<int32_t>(), d.nvml_index = in.get<int32_t>(), d.total_bytes = in.get<uint64_t>();
    for (auto& b : d.uuid) b = in.get<uint8_t>();
    d.name = in.str();
    t.devices.push_back(std::move(d));
  }
  for (uint64_t k = in.count(40); k--;) {
    ModuleInfo m;
    m.load_bias = in.get<uint64_t>(), m.start = in.get<uint64_t>(), m.end = in.get<uint64_t>();
    m.path = in.str(), m.build_id = in.str();
    t.modules.push_back(std::move(m));
  }
  for (uint64_t k = in.count(10); k--;) {
    const uint16_t id = in.get<uint16_t>();
    t.api_names[id] = in.str();
  }
  for (uint64_t k = in.count(16); k--;) {
    StackNode n;
    n.id = in.get<uint32_t>(), n.parent = in.get<uint32_t>(), n.ip = in.get<uint64_t>();
    t.stack_nodes[n.id] = n;
  }
  for (uint64_t k = in.count(28); k--;) {
    Symbol s;
    s.ip = in.get<uint64_t>(), s.line = in.get<uint32_t>(), s.function = in.str(), s.file = in.str();
    t.symbols[s.ip] = std::move(s);
  }
}

std::string compress(const std::string& raw) {
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), raw.data(), raw.size(), 3);
  if (ZSTD_isError(n)) return {};
  out.resize(n);
  return out;
}

// A size no real state compresses from (they shrink 3-10 times) is damage, not a reason
// to allocate gigabytes.
bool decompress(const char* p, size_t n, uint64_t raw_bytes, std::string& raw) {
  if (raw_bytes > uint64_t(n) * 4096 + (1u << 20) || ZSTD_getFrameContentSize(p, n) != raw_bytes) return false;
  raw.assign(raw_bytes, '\0');
  const size_t k = ZSTD_decompress(raw.data(), raw.size(), p, n);
  return !ZSTD_isError(k) && k == raw_bytes;
}

std::string seal_before(std::span<const uint8_t> trace, uint64_t offset) {
  if (offset < kSealBytes || offset > trace.size()) return {};
  return {reinterpret_cast<const char*>(trace.data() + offset - kSealBytes), kSealBytes};
}

}  // namespace checkpoint_impl
using namespace checkpoint_impl;

// Replayer's private members, saved and restored (replay.h names this a friend).
struct ReplayerCheckpoint {
  static std::string save(const Replayer& r) {
    Sink o;
    o.put(r.granule_);
    o.put(uint64_t(r.devices_.size()));
    for (const auto& [d, s] : r.devices_) {
      o.put(d);
      for (size_t k = 0; k < format::kKindCount; ++k) o.put(s.live_bytes[k]), o.put(s.live_count[k]);
      o.put(s.device_bytes), o.put(s.reserved_bytes), o.put(s.context_bytes);
      DeviceCounts c = s.counts;
      for (size_t k = 0; k < kCountFields; ++k) o.put(*count_fields(c, k));
      o.put(uint64_t(s.import_pids.size()));
      for (uint32_t pid : s.import_pids) o.put(pid);
      o.put(uint64_t(s.frag.live().size()));
      for (const auto& [start, size] : s.frag.live()) o.put(uint64_t(start)), o.put(uint64_t(size));
    }
    o.put(uint64_t(r.by_address_.size()));
    r.by_address_.for_each([&](uint64_t address, const LiveEntry& a) {
      put_alloc(o, Replayer::view(a, address, Replayer::other_of(r.alloc_handles_, address, a)));
    });
    o.put(uint64_t(r.handles_.size()));
    for (const auto& [h, v] : r.handles_) {
      o.put(h), put_alloc(o, Replayer::view(v.alloc, Replayer::other_of(r.handle_addresses_, h, v.alloc), h));
      o.put(v.references), o.put(v.maps);
    }
    o.put(uint64_t(r.mappings_.size()));
    for (const auto& [a, m] : r.mappings_)
      o.put(a), o.put(m.size), o.put(m.handle), o.put(m.device), o.put(uint8_t(m.imported));
    o.put(uint64_t(r.reservations_.size()));
    for (const auto& [a, v] : r.reservations_)
      o.put(a), put_alloc(o, Replayer::view(v, a, Replayer::other_of(r.reservation_handles_, a, v)));
    o.put(uint64_t(r.graph_.size()));
    for (const auto& [a, node] : r.graph_) o.put(a), o.put(node.size);
    return o.s;
  }

  static std::optional<Replayer> restore(const std::string& raw) {
    Source in{raw.data(), raw.size()};
    Replayer r(in.get<uint64_t>());
    for (uint64_t k = in.count(4); k--;) {
      const int32_t d = in.get<int32_t>();
      DeviceState& s = r.dev(d);
      for (size_t i = 0; i < format::kKindCount; ++i)
        s.live_bytes[i] = in.get<uint64_t>(), s.live_count[i] = in.get<uint64_t>();
      s.device_bytes = in.get<uint64_t>(), s.reserved_bytes = in.get<uint64_t>(), s.context_bytes = in.get<uint64_t>();
      for (size_t i = 0; i < kCountFields; ++i) *count_fields(s.counts, i) = in.get<uint64_t>();
      for (uint64_t n = in.count(4); n--;) s.import_pids.push_back(in.get<uint32_t>());
      // The index's figures are a function of its set of ranges (fragmentation.h), which
      // never overlap: inserted in any order, they give the same figures.
      for (uint64_t n = in.count(16); n--;) {
        const uint64_t start = in.get<uint64_t>(), size = in.get<uint64_t>();
        if (!s.frag.insert(start, size)) in.ok = false;
      }
    }
    for (uint64_t k = in.count(kAllocBytes); k--;) {
      const LiveAlloc a = get_alloc(in);
      LiveEntry v = Replayer::compact(a);
      v.has_other = Replayer::note(r.alloc_handles_, a.address, a.handle);
      r.by_address_.insert_or_assign(a.address, v);
    }
    for (uint64_t k = in.count(8 + kAllocBytes + 8); k--;) {
      const uint64_t h = in.get<uint64_t>();
      const LiveAlloc a = get_alloc(in);
      // Saved with its key for a handle (the replay's view of it), as the replay made it.
      Replayer::Handle v{Replayer::compact(a)};
      v.alloc.has_other = Replayer::note(r.handle_addresses_, h, a.address);
      v.references = in.get<uint32_t>(), v.maps = in.get<uint32_t>();
      r.handles_[h] = v;
    }
    for (uint64_t k = in.count(29); k--;) {
      const uint64_t a = in.get<uint64_t>();
      Replayer::Mapping m;
      m.size = in.get<uint64_t>(), m.handle = in.get<uint64_t>(), m.device = in.get<int32_t>();
      m.imported = in.get<uint8_t>();
      r.mappings_[a] = m;
    }
    for (uint64_t k = in.count(8 + kAllocBytes); k--;) {
      const uint64_t a = in.get<uint64_t>();
      const LiveAlloc saved = get_alloc(in);
      LiveEntry& v = r.reservations_[a] = Replayer::compact(saved);
      v.has_other = Replayer::note(r.reservation_handles_, a, saved.handle);
      ++r.dev(v.device).reserved_count;  // not saved: the reservations tell it
    }
    for (uint64_t k = in.count(16); k--;) {
      const uint64_t a = in.get<uint64_t>();
      // A node's device is not saved: only the tracer reads it (the trace's frees carry theirs).
      r.graph_[a] = {in.get<uint64_t>(), -1};
    }
    if (!in.ok || in.pos != in.n) return std::nullopt;
    return r;
  }
};

std::string make_index(std::span<const uint8_t> bytes, const std::string& path, uint64_t every, Trace& meta,
                       std::string& index_bytes, IndexStats& stats) {
  every = std::max<uint64_t>(every, 1);
  Sink file;
  file.s.append(kMagic, sizeof kMagic);
  file.s.append(3 * 8, '\0');  // the directory's place, filled in below
  std::vector<Checkpoint> cps;
  auto add = [&](const Replayer& r, uint64_t events_before, uint64_t offset, uint64_t time_ns) -> bool {
    Checkpoint c;
    c.events_before = events_before;
    c.byte_offset = offset;
    c.time_ns = time_ns;
    c.seal = seal_before(bytes, offset);
    const std::string raw = ReplayerCheckpoint::save(r);
    const std::string packed = compress(raw);
    if (packed.empty() && !raw.empty()) return false;
    c.state_offset = file.s.size();
    c.state_bytes = packed.size();
    c.state_raw_bytes = raw.size();
    c.state_hash = XXH3_64bits(packed.data(), packed.size());
    file.s += packed;
    cps.push_back(std::move(c));
    return true;
  };

  // One pass, chunk by chunk: each chunk's events are replayed and dropped, and a chunk
  // end at least `every` events after the last checkpoint gets the next one.
  std::optional<Replayer> r;
  uint64_t granule = 0, applied = 0, last_ns = 0, due = every;
  std::string why;
  const ChunkCallback on_chunk = [&](const Trace& t, const ChunkEnd& end) {
    // The replay starts with the first events, by when the tracer has written its process
    // record (the granule); chunks before them hold no events to replay.
    if (!why.empty() || (!r && t.events.size() == 0)) return;
    if (!r) {
      granule = t.granule();
      r.emplace(granule);
      if (!add(*r, 0, 0, 0)) why = "compression failed";
    }
    for (size_t k = 0; k < t.events.size() && why.empty(); ++k, ++applied) {
      const Event e = t.events[k];
      if (applied && e.time_ns < last_ns)
        why = "its events are not in time order (event " + std::to_string(applied) + ")";
      last_ns = e.time_ns;
      r->apply(e, applied);
    }
    if (why.empty() && end.events_before >= due) {
      if (!add(*r, end.events_before, end.byte_offset, last_ns)) why = "compression failed";
      due = end.events_before + every;
    }
  };
  meta = parse_trace_streaming(bytes, path, on_chunk);
  const Trace& t = meta;
  if (!t.header_ok) return "the trace is unreadable";
  if (!t.damage.empty()) return "the trace is damaged or cut short (" + t.damage.front().message + ")";
  if (!t.sealed) return "the trace has no checksummed chunks (format before 1.2)";
  if (!why.empty()) return why;
  if (!r) {  // sealed, yet no events: the start is the only checkpoint
    r.emplace(t.granule());
    if (!add(*r, 0, 0, 0)) return "compression failed";
  } else if (t.granule() != granule) {
    return "its process record comes after its first events";  // the replay took another granule
  }

  Sink dir;
  dir.put(uint64_t(bytes.size())), dir.put(trace_hash(bytes)), dir.put(applied);
  // What parse_moment gives for "end" and "peak" over the whole trace (live_time.h).
  const uint64_t end = applied ? std::max(last_moment(t), last_ns) : last_moment(t);
  const std::optional<uint64_t> peak = peak_moment_of(*r);
  dir.put(end), dir.put(uint8_t(peak.has_value())), dir.put(peak.value_or(0));
  put_meta(dir, t);
  dir.put(uint64_t(cps.size()));
  for (const auto& c : cps) {
    dir.put(c.events_before), dir.put(c.byte_offset), dir.put(c.time_ns), dir.str(c.seal);
    dir.put(c.state_offset), dir.put(c.state_bytes), dir.put(c.state_raw_bytes), dir.put(c.state_hash);
  }
  const std::string packed_dir = compress(dir.s);
  if (packed_dir.empty()) return "compression failed";
  const uint64_t dir_offset = file.s.size(), dir_bytes = packed_dir.size(), raw_dir = dir.s.size();
  const uint64_t dir_hash = XXH3_64bits(packed_dir.data(), packed_dir.size());
  file.s += packed_dir;
  // The directory's offset and size, then its hash over (size of raw, compressed bytes).
  std::memcpy(file.s.data() + 8, &dir_offset, 8);
  std::memcpy(file.s.data() + 16, &dir_bytes, 8);
  std::memcpy(file.s.data() + 24, &dir_hash, 8);
  file.put(raw_dir);

  stats.checkpoints = cps.size();
  stats.events = applied;
  stats.index_bytes = file.s.size();
  index_bytes = std::move(file.s);
  return {};
}

std::string load_index(const std::string& index_path, std::span<const uint8_t> trace_bytes, TraceIndex& out) {
  auto file = std::make_shared<const MappedFile>(index_path);
  if (!file->error().empty()) return "cannot read it: " + file->error();
  const auto b = file->bytes();
  if (b.size() >= sizeof kMagicV1 && std::memcmp(b.data(), kMagicV1, sizeof kMagicV1) == 0)
    return "it is an index of an older format (re-run `cumemtrace index`)";
  if (b.size() < kFixedHeader + 8 || std::memcmp(b.data(), kMagic, sizeof kMagic) != 0) return "not a cumemtrace index";
  uint64_t dir_offset, dir_bytes, dir_hash, raw_dir;
  std::memcpy(&dir_offset, b.data() + 8, 8);
  std::memcpy(&dir_bytes, b.data() + 16, 8);
  std::memcpy(&dir_hash, b.data() + 24, 8);
  std::memcpy(&raw_dir, b.data() + b.size() - 8, 8);
  if (dir_offset < kFixedHeader || dir_offset > b.size() - 8 || dir_bytes != b.size() - 8 - dir_offset ||
      XXH3_64bits(b.data() + dir_offset, dir_bytes) != dir_hash)
    return "the index is damaged";
  std::string dir;
  if (!decompress(reinterpret_cast<const char*>(b.data() + dir_offset), dir_bytes, raw_dir, dir))
    return "the index is damaged";
  Source in{dir.data(), dir.size()};
  TraceIndex x;
  x.trace_bytes = in.get<uint64_t>(), x.trace_hash = in.get<uint64_t>(), x.events = in.get<uint64_t>();
  x.end_ns = in.get<uint64_t>();
  const bool has_peak = in.get<uint8_t>();
  const uint64_t peak = in.get<uint64_t>();
  if (has_peak) x.peak_ns = peak;
  get_meta(in, x.meta);
  for (uint64_t k = in.count(8 * 7 + 8); k--;) {
    Checkpoint c;
    c.events_before = in.get<uint64_t>(), c.byte_offset = in.get<uint64_t>(), c.time_ns = in.get<uint64_t>();
    c.seal = in.str();
    c.state_offset = in.get<uint64_t>(), c.state_bytes = in.get<uint64_t>(), c.state_raw_bytes = in.get<uint64_t>();
    c.state_hash = in.get<uint64_t>();
    if (c.state_offset < kFixedHeader || c.state_offset > dir_offset || c.state_bytes > dir_offset - c.state_offset)
      in.ok = false;
    x.checkpoints.push_back(std::move(c));
  }
  if (!in.ok || in.pos != in.n || x.checkpoints.empty() || x.checkpoints.front().events_before != 0)
    return "the index is damaged";
  if (x.trace_bytes != trace_bytes.size() || x.trace_hash != trace_hash(trace_bytes))
    return "it is the index of another version of the trace (re-run `cumemtrace index`)";
  for (const auto& c : x.checkpoints)
    if (c.byte_offset != 0 && seal_before(trace_bytes, c.byte_offset) != c.seal)
      return "it is the index of another version of the trace (re-run `cumemtrace index`)";
  x.file = std::move(file);
  out = std::move(x);
  return {};
}

std::optional<Replayer> restore_checkpoint(const TraceIndex& index, const Checkpoint& c, std::string& error) {
  const auto b = index.file->bytes();
  const char* p = reinterpret_cast<const char*>(b.data() + c.state_offset);
  std::string raw;
  if (XXH3_64bits(p, c.state_bytes) != c.state_hash || !decompress(p, c.state_bytes, c.state_raw_bytes, raw)) {
    error = "the index is damaged (checkpoint at event " + std::to_string(c.events_before) + ")";
    return std::nullopt;
  }
  auto r = ReplayerCheckpoint::restore(raw);
  if (!r) error = "the index is damaged (checkpoint at event " + std::to_string(c.events_before) + ")";
  return r;
}

const Checkpoint& checkpoint_for(const TraceIndex& index, uint64_t at_ns) {
  const Checkpoint* best = &index.checkpoints.front();
  for (const auto& c : index.checkpoints)
    if (c.events_before > 0 && c.time_ns <= at_ns && c.events_before > best->events_before) best = &c;
  return *best;
}

}  // namespace cumemtrace
