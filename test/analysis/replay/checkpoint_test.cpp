// The checkpoint index (analysis/replay/checkpoint.h): `live --at` from an index gives what a
// whole replay gives, at every moment, and an index that does not fit its trace is refused.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "catch.h"
#include "replay/checkpoint.h"
#include "reports/live_index.h"
#include "replay/live_time.h"
#include "read/reader_chunks.h"
#include "reports/report.h"
#include "render/report_json.h"
#include "shell.h"
#include "trace_builder.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::TraceBuilder;
using format::Kind;
using format::Op;

namespace {

std::string temp(const std::string& name) {
  return "/tmp/cumemtrace-checkpoint-" + std::to_string(getpid()) + "-" + name;
}

// XORs the byte at `offset` of the file at `path` with `mask`, in place.
void flip_byte(const std::string& path, uint64_t offset, char mask) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(std::streamoff(offset));
  const char c = char(f.get());
  f.seekp(std::streamoff(offset));
  f.put(char(c ^ mask));
}

// A random job on two devices: allocations and frees (some of addresses never seen, some
// at addresses still live), failures, VMM handles created, retained, mapped, unmapped and
// released in any order, reservations, graph nodes captured and freed, an imported handle
// mapped, contexts; times that repeat. Stack 3 is defined half-way. Every record is its
// own sealed chunk (TraceBuilder), so every event is a place to resume.
struct RandomJob {
  std::mt19937_64 rng;
  TraceBuilder b;
  uint64_t t = 0;
  std::vector<std::pair<uint64_t, int32_t>> live;  // address, device
  std::vector<std::pair<uint64_t, int32_t>> handles;
  std::vector<uint64_t> mapped, reserved, graph;
  uint64_t next_address = 0x7000000000, next_va = 0x600000000, next_handle = 0x5100000001;

  explicit RandomJob(uint64_t seed, int events) : rng(seed) {
    b.process().device(0, 80ull << 30).device(1, 80ull << 30);
    b.module(0, 0x400000, 0x500000, "/opt/app/libmodel.so").module(0, 0x500000, 0x600000, "/opt/app/libdata.so");
    b.stack(1, 0, 0x400100).stack(2, 0, 0x500100);
    for (int i = 0; i < events; ++i) {
      if (i == events / 2) b.stack(3, 1, 0x500200);
      step(i >= events / 2 ? 3 : 2);
    }
    b.symbol(0x400100, "train_step", "model.py", 12).end(t + 5);
  }

  uint64_t pick(size_t n) { return rng() % n; }
  uint64_t size() { return (1 + pick(16 * 1024)) * 512; }
  format::EventRecord ev(Op op, Kind kind, uint64_t address, uint64_t size, int32_t device, uint64_t handle = 0) {
    auto e = TraceBuilder::ev(t, op, kind, address, size, device, uint32_t(1 + pick(3)), 1);
    e.handle = handle;
    return e;
  }
  template <class V>
  auto take(std::vector<V>& v) {
    const size_t i = pick(v.size());
    auto x = v[i];
    v.erase(v.begin() + ptrdiff_t(i));
    return x;
  }

  void step(uint32_t stacks) {
    t += pick(3);  // 0: the same time as the event before
    const int32_t dev = int32_t(pick(2));
    const uint64_t r = pick(100);
    if (r < 35 || live.empty()) {
      const uint64_t s = size();
      auto e = ev(Op::kAlloc, r % 3 == 0 ? Kind::kAsyncPool : Kind::kDevice, next_address, s, dev);
      e.stack_id = uint32_t(1 + pick(stacks));
      b.event(e);
      live.emplace_back(next_address, dev);
      next_address += (s + 511) / 512 * 512 + (pick(2) ? 0 : 2 * MiB);
    } else if (r < 60) {
      const auto [a, d] = take(live);
      b.event(ev(Op::kFree, Kind::kDevice, a, 0, d));
    } else if (r < 64) {
      b.event(ev(Op::kAlloc, Kind::kVmmPhysical, 0, 2 * MiB * (1 + pick(4)), dev, next_handle));
      handles.emplace_back(next_handle++, dev);
    } else if (r < 69 && !handles.empty()) {
      const auto [h, d] = handles[pick(handles.size())];
      b.event(ev(Op::kMap, Kind::kVmmMap, next_va, 2 * MiB, d, h));
      mapped.push_back(next_va);
      next_va += 2 * MiB * (1 + pick(2));
    } else if (r < 73 && !mapped.empty()) {
      b.event(ev(Op::kUnmap, Kind::kVmmMap, take(mapped), 2 * MiB, dev));
    } else if (r < 77 && !handles.empty()) {
      const auto [h, d] = take(handles);
      b.event(ev(Op::kFree, Kind::kVmmPhysical, 0, 0, d, h));
    } else if (r < 79 && !handles.empty()) {
      const auto [h, d] = handles[pick(handles.size())];
      b.event(ev(Op::kRetain, Kind::kVmmPhysical, 0, 0, d, h));
      handles.emplace_back(h, d);  // one more release to go
    } else if (r < 82) {
      b.event(ev(Op::kReserve, Kind::kVmmReserve, 0x900000000 + t * 64 * MiB, 64 * MiB, -1));
      reserved.push_back(0x900000000 + t * 64 * MiB);
    } else if (r < 84 && !reserved.empty()) {
      b.event(ev(Op::kReserveFree, Kind::kVmmReserve, take(reserved), 64 * MiB, -1));
    } else if (r < 87) {
      auto e = ev(Op::kAlloc, Kind::kAsyncPool, 0xa00000000 + t * MiB, MiB, dev);
      e.flags = format::kEventCaptured;
      b.event(e);
      graph.push_back(e.address);
    } else if (r < 89 && !graph.empty()) {
      b.event(ev(Op::kFree, Kind::kAsyncPool, graph[pick(graph.size())], 0, dev));
    } else if (r < 91) {
      const auto [a, d] = live[pick(live.size())];
      b.event(ev(Op::kAlloc, Kind::kDevice, a, size(), d));  // an address still live: a lost free
    } else if (r < 93) {
      auto e = ev(Op::kAlloc, Kind::kDevice, 0, 40ull << 30, dev);
      e.result = 2;
      b.event(e);
    } else if (r < 95) {
      b.event(ev(Op::kFree, Kind::kDevice, 0xdead000000 + t, 0, dev));
    } else if (r < 97) {
      const uint64_t h = next_handle++;
      b.event(ev(Op::kAlloc, Kind::kIpcImport, 0, 0, dev, h));
      b.event(ev(Op::kMap, Kind::kVmmMap, next_va, 4 * MiB, dev, h));
      mapped.push_back(next_va);
      next_va += 4 * MiB;
      handles.emplace_back(h, dev);
    } else {
      b.event(ev(Op::kContextCreate, Kind::kDevice, 0, 500 * MiB, dev));
    }
  }
};

struct Indexed {
  std::string path, index_path;
  TraceIndex index;
  IndexStats stats;
  std::string error;
};

// Writes the job's trace and its index (every `every` events) to files, and loads both.
Indexed index_of(const TraceBuilder& b, const std::string& name, uint64_t every) {
  Indexed x{temp(name + ".trace"), temp(name + ".trace.idx"), {}, {}, {}};
  b.write(x.path);
  const MappedFile file(x.path);
  Trace meta;
  std::string bytes;
  x.error = make_index(file.bytes(), x.path, every, meta, bytes, x.stats);
  std::ofstream(x.index_path, std::ios::binary | std::ios::trunc) << bytes;
  if (x.error.empty()) x.error = load_index(x.index_path, file.bytes(), x.index);
  return x;
}

std::vector<std::string> answers(const std::vector<LiveReport>& lives) {
  std::vector<std::string> out;
  for (const auto& l : lives) out.push_back(to_json(l).dump());
  return out;
}

}  // namespace

TEST_CASE("live from a checkpoint index answers every moment exactly as a whole replay does") {
  const RandomJob job(20261201, 1500);
  for (const uint64_t every : {uint64_t(1), uint64_t(7), uint64_t(97), uint64_t(1'000'000)}) {
    INFO("every " << every);
    Indexed x = index_of(job.b, "every" + std::to_string(every), every);
    REQUIRE(x.error.empty());
    const Trace full = read_trace(x.path);
    REQUIRE(full.damage.empty());
    const uint64_t n = full.events.size();
    // A checkpoint before the first event, then one at the first chunk end at least
    // `every` events after the last: with a chunk per record, exactly every `every` events.
    CHECK(x.stats.checkpoints == 1 + n / every);
    CHECK(x.index.checkpoints.size() == x.stats.checkpoints);
    CHECK(x.index.events == n);

    std::vector<uint64_t> ats{0};
    for (uint64_t k = 0; k <= job.t + 6; ++k) ats.push_back(TraceBuilder::kStart + k);
    // Every moment on its own, and all of them at once in a shuffled order.
    Trace meta = x.index.meta;
    meta.path = x.path;
    std::vector<uint64_t> shuffled = ats;
    std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(every));
    std::string why;
    const auto together = build_live_indexed(x.path, MappedFile(x.path).bytes(), x.index, meta, shuffled, why);
    REQUIRE(together);
    CHECK(answers(*together) == answers(build_live(full, shuffled)));
    for (size_t k = 0; k < ats.size(); k += every == 1 ? 1 : 5) {
      const MappedFile file(x.path);
      const auto one = build_live_indexed(x.path, file.bytes(), x.index, meta, {ats[k]}, why);
      REQUIRE(one);
      const LiveReport expected = build_live(full, ats[k]);
      INFO("at " << ats[k]);
      CHECK((*one)[0].events_applied == expected.events_applied);
      CHECK(to_json((*one)[0]).dump() == to_json(expected).dump());
    }
    // "end" and "peak" come from the index, as the whole trace gives them.
    const KnownMoments known{x.index.end_ns, x.index.peak_ns};
    for (const char* m : {"end", "peak"}) {
      std::string e1, e2;
      CHECK(parse_moment(m, meta, e1, &known) == parse_moment(m, full, e2));
    }
    std::remove(x.path.c_str());
    std::remove(x.index_path.c_str());
  }
}

TEST_CASE("the checkpoints hold the live state: a moment after the last checkpoint replays only the rest") {
  // 1 MiB at 10 ns, 2 MiB at 20 ns, the first freed at 30 ns, 4 MiB at 40 ns. With a
  // checkpoint every 2 events: before event 0, after event 2 (time 20), after event 4 (40).
  TraceBuilder b;
  b.process().device(0, 80ull << 30);
  b.alloc(10, 0x7000000000, MiB)
      .alloc(20, 0x7000200000, 2 * MiB)
      .free(30, 0x7000000000)
      .alloc(40, 0x7000400000, 4 * MiB);
  Indexed x = index_of(b, "small", 2);
  REQUIRE(x.error.empty());
  REQUIRE(x.index.checkpoints.size() == 3);
  CHECK(x.index.checkpoints[1].events_before == 2);
  CHECK(x.index.checkpoints[1].time_ns == TraceBuilder::kStart + 20);
  CHECK(x.index.checkpoints[2].events_before == 4);
  CHECK(&checkpoint_for(x.index, TraceBuilder::kStart + 35) == &x.index.checkpoints[1]);
  CHECK(&checkpoint_for(x.index, TraceBuilder::kStart + 19) == &x.index.checkpoints[0]);
  std::string why;
  auto r = restore_checkpoint(x.index, x.index.checkpoints[1], why);
  REQUIRE(r);
  CHECK(r->devices().at(0).device_bytes == 3 * MiB);
  CHECK(r->live(0).size() == 2);
  CHECK(r->devices().at(0).frag.figures().live_bytes == 3 * MiB);
  Trace meta = x.index.meta;
  meta.path = x.path;
  const auto at35 =
      build_live_indexed(x.path, MappedFile(x.path).bytes(), x.index, meta, {TraceBuilder::kStart + 35}, why);
  REQUIRE(at35);
  CHECK((*at35)[0].events_applied == 3);
  CHECK((*at35)[0].devices.at(0).device_bytes == 2 * MiB);
  std::remove(x.path.c_str());
  std::remove(x.index_path.c_str());
}

TEST_CASE("no index for a damaged, unsealed or out-of-order trace: it says why") {
  TraceBuilder cut;
  cut.process().device(0, 80ull << 30).alloc(10, 0x7000000000, MiB).unsealed().alloc(20, 0x7000200000, MiB);
  CHECK(index_of(cut, "cut", 1).error.find("damaged or cut short") != std::string::npos);

  TraceBuilder old(1);
  old.process().device(0, 80ull << 30).alloc(10, 0x7000000000, MiB);
  CHECK(index_of(old, "old", 1).error == "the trace has no checksummed chunks (format before 1.2)");

  TraceBuilder back;
  back.process().device(0, 80ull << 30).alloc(20, 0x7000000000, MiB).alloc(10, 0x7000200000, MiB);
  CHECK(index_of(back, "back", 1).error == "its events are not in time order (event 1)");
  for (const char* n : {"cut", "old", "back"}) {
    std::remove(temp(std::string(n) + ".trace").c_str());
    std::remove(temp(std::string(n) + ".trace.idx").c_str());
  }
}

TEST_CASE("an index of another version of its trace, or a damaged one, is refused") {
  const RandomJob job(7, 200);
  Indexed x = index_of(job.b, "stale", 10);
  REQUIRE(x.error.empty());
  // `symbolize` appends records: the trace is no longer the one indexed.
  TraceBuilder more = job.b;
  more.symbol(0x500100, "load", "data.py", 3);
  more.write(x.path);
  TraceIndex again;
  CHECK(load_index(x.index_path, MappedFile(x.path).bytes(), again).find("another version of the trace") !=
        std::string::npos);
  // The same size, but other bytes at the start: another trace.
  job.b.write(x.path);
  {
    std::fstream f(x.path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  CHECK(load_index(x.index_path, MappedFile(x.path).bytes(), again).find("another version of the trace") !=
        std::string::npos);
  job.b.write(x.path);
  CHECK(load_index(x.index_path, MappedFile(x.path).bytes(), again).empty());
  // A flipped byte in a checkpoint's state: found when it is read.
  flip_byte(x.index_path, again.checkpoints[2].state_offset + 3, 1);
  TraceIndex flipped;
  REQUIRE(load_index(x.index_path, MappedFile(x.path).bytes(), flipped).empty());
  std::string why;
  CHECK_FALSE(restore_checkpoint(flipped, flipped.checkpoints[2], why));
  CHECK(why == "the index is damaged (checkpoint at event 20)");
  // Cut short: refused as a whole.
  CHECK(::truncate(x.index_path.c_str(), 100) == 0);
  CHECK(load_index(x.index_path, MappedFile(x.path).bytes(), flipped) == "the index is damaged");
  std::remove(x.path.c_str());
  std::remove(x.index_path.c_str());
}

TEST_CASE("read chunk by chunk: every event handed over once, in order, at the chunk ends a whole read finds") {
  const RandomJob job(21, 300);
  const std::string path = temp("stream.trace");
  job.b.write(path);
  const MappedFile file(path);
  std::vector<ChunkEnd> ends;
  const Trace whole = parse_trace_chunks(file.bytes(), path, ends);
  REQUIRE(whole.events.size() > 250);
  std::vector<ChunkEnd> seen;
  std::vector<uint64_t> times, addresses;
  size_t most_at_once = 0;
  const Trace streamed = parse_trace_streaming(file.bytes(), path, [&](const Trace& t, const ChunkEnd& end) {
    seen.push_back(end);
    most_at_once = std::max(most_at_once, t.events.size());
    for (size_t k = 0; k < t.events.size(); ++k)
      times.push_back(t.events[k].time_ns), addresses.push_back(t.events[k].address);
  });
  CHECK(streamed.events.size() == 0);
  CHECK(most_at_once == 1);  // TraceBuilder seals every record on its own
  REQUIRE(seen.size() == ends.size());
  for (size_t k = 0; k < ends.size(); ++k) {
    CHECK(seen[k].byte_offset == ends[k].byte_offset);
    CHECK(seen[k].events_before == ends[k].events_before);
  }
  REQUIRE(times.size() == whole.events.size());
  for (size_t k = 0; k < times.size(); ++k) {
    CHECK(times[k] == whole.events[k].time_ns);
    CHECK(addresses[k] == whole.events[k].address);
  }
  CHECK(streamed.stack_nodes.size() == whole.stack_nodes.size());
  CHECK(streamed.symbols.size() == whole.symbols.size());
  std::remove(path.c_str());
}

TEST_CASE(
    "a byte changed anywhere in the trace, past its first 64 KiB and between checkpoints, makes the index stale") {
  const RandomJob job(11, 3000);  // ~300 KB: one sealed chunk per record
  Indexed x = index_of(job.b, "middle", 200);
  REQUIRE(x.error.empty());
  REQUIRE(x.index.checkpoints.size() > 4);
  const uint64_t size = MappedFile(x.path).bytes().size();
  // The byte just after a checkpoint late in the file: the next chunk's first record, which
  // no checkpoint's checksum record covers.
  const Checkpoint& late = x.index.checkpoints[x.index.checkpoints.size() - 2];
  REQUIRE(late.byte_offset > (64u << 10));
  REQUIRE(late.byte_offset + 8 < size);
  flip_byte(x.path, late.byte_offset + 8, 0x40);
  REQUIRE(MappedFile(x.path).bytes().size() == size);
  TraceIndex again;
  CHECK(load_index(x.index_path, MappedFile(x.path).bytes(), again) ==
        "it is the index of another version of the trace (re-run `cumemtrace index`)");
  std::remove(x.path.c_str());
  std::remove(x.index_path.c_str());
}

TEST_CASE("cumemtrace index: --every 1 or more, -o not empty, a lone checkpoint is said") {
  const RandomJob job(5, 40);
  const std::string trace = temp("opts.trace"), cli = CUMEMTRACE_CLI;
  job.b.write(trace);
  CHECK(test::shell(cli + " index --every 0 " + trace + " 2>/dev/null").status == 2);
  CHECK(test::shell(cli + " index -o '' " + trace + " 2>/dev/null").status == 2);
  const auto one = test::shell(cli + " index --every 100000 " + trace + " 2>&1");
  CHECK(one.status == 0);
  CHECK(one.out.find(": 1 checkpoint over " + std::to_string(read_trace(trace).events.size()) +
                     " events (at chunk ends, at least 100000 events apart), ") != std::string::npos);
  CHECK(one.out.find("cumemtrace index: only the start of the trace: it has fewer than 100000 events or one chunk, "
                     "so `live` gains nothing from this index\n") != std::string::npos);
  // A trace that cannot be read, with an index beside it: one message, the reader's.
  std::remove(trace.c_str());
  const auto gone = test::shell(cli + " live " + trace + " --at end 2>&1");
  CHECK(gone.status == 1);
  CHECK(gone.out.find("not using") == std::string::npos);
  std::remove((trace + ".idx").c_str());
}

TEST_CASE("cumemtrace index, then live: the same output, and a stale index is said and not used") {
  const RandomJob job(99, 400);
  const std::string trace = temp("cli.trace");
  job.b.write(trace);
  const std::string cli = CUMEMTRACE_CLI;
  const std::string moments = " --at 1.0000001s --at peak --at end --at " + std::to_string(TraceBuilder::kStart + 150);
  const auto without = test::shell(cli + " live " + trace + moments + " 2>&1");
  REQUIRE(without.status == 0);
  const auto made = test::shell(cli + " index --every 50 " + trace + " 2>&1");
  CHECK(made.status == 0);
  CHECK(made.out.find(trace + ".idx: ") == 0);
  CHECK(made.out.find("over " + std::to_string(read_trace(trace).events.size()) + " events") != std::string::npos);
  const auto with = test::shell(cli + " live " + trace + moments + " 2>&1");
  CHECK(with.status == 0);
  CHECK(with.out == without.out);
  const auto json_without = test::shell(cli + " live --json " + trace + moments + " 2>/dev/null");
  std::remove((trace + ".idx").c_str());
  CHECK(test::shell(cli + " index -o " + trace + ".idx " + trace + " >/dev/null").status == 0);
  CHECK(test::shell(cli + " live --json " + trace + moments + " 2>/dev/null").out == json_without.out);

  { std::ofstream(trace, std::ios::app) << "x"; }  // the trace changed after it was indexed
  const auto stale = test::shell(cli + " live " + trace + moments + " 2>&1 >/dev/null");
  CHECK(stale.out.find("cumemtrace live: not using " + trace +
                       ".idx: it is the index of another version of the "
                       "trace (re-run `cumemtrace index`); reading the whole trace") != std::string::npos);
  const auto refused = test::shell(cli + " index " + trace + " 2>&1");
  CHECK(refused.status == 1);
  CHECK(refused.out.find("cumemtrace index: no index for " + trace + ": the trace is damaged or cut short") !=
        std::string::npos);
  std::remove(trace.c_str());
  std::remove((trace + ".idx").c_str());
}
