// Inside a caching allocator's segments (reports/cache/cache_layout.h): free blocks between
// live blocks, worked out by hand from the addresses below.
#include "catch.h"

#include "read/reader.h"
#include "reports/cache/cache_layout.h"
#include "sizes.h"

using namespace cumemtrace;
using format::Kind;
using format::Op;

namespace {

constexpr uint64_t KiB = 1024;
constexpr uint64_t A = 0x7f0000000000;  // an expandable segment: two 2 MiB mappings side by side
constexpr uint64_t B = A + 4 * MiB;     // a cudaMalloc'd segment right after them
constexpr uint64_t C = A + 64 * MiB;    // a cudaMalloc no block ever lies in (a library's workspace)

Event ev(Op op, Kind kind, uint64_t address, uint64_t size, int32_t device = 0) {
  Event e;
  e.op = op, e.kind = kind, e.address = address, e.size = size, e.device = device;
  return e;
}

BlockEvent block(format::BlockOp op, uint64_t address, uint64_t size, int32_t device = 0) {
  BlockEvent b;
  b.op = op, b.address = address, b.size = size, b.device = device;
  return b;
}

}  // namespace

TEST_CASE(
    "cache layout: free blocks span adjacent mappings, never two segments, and a segment no block used is not "
    "the cache's") {
  CacheLayout l;
  l.apply(ev(Op::kMap, Kind::kVmmMap, A, 2 * MiB));
  l.apply(ev(Op::kMap, Kind::kVmmMap, A + 2 * MiB, 2 * MiB));
  l.apply(ev(Op::kAlloc, Kind::kDevice, B, 2 * MiB));
  l.apply(ev(Op::kAlloc, Kind::kDevice, C, 8 * MiB));
  l.apply(ev(Op::kAlloc, Kind::kDevice, C + 16 * MiB, 2 * MiB, 1));  // another device's
  // [A, A+512K) and [A+1M, A+3M) (across the two mappings); [B, B+1M).
  l.apply(block(format::BlockOp::kAlloc, A, 512 * KiB));
  l.apply(block(format::BlockOp::kAlloc, A + 1 * MiB, 2 * MiB));
  l.apply(block(format::BlockOp::kAlloc, B, 1 * MiB));
  l.apply(block(format::BlockOp::kAlloc, C + 16 * MiB, 1 * MiB, 1));
  CacheFigures f = l.figures(0, 5);
  // The expandable segment [A, A+4M): free [A+512K, A+1M) and [A+3M, A+4M); B: free
  // [B+1M, B+2M). The 1 MiB free at A+3M and at B touch but are two blocks: a block never
  // spans two cudaMalloc'd segments. C held no block: a workspace, not the cache's.
  CHECK(f.time_ns == 5);
  CHECK(f.segments == 2);
  CHECK(f.reserved == 6 * MiB);
  CHECK(f.allocated == 3 * MiB + 512 * KiB);
  CHECK(f.free == 2 * MiB + 512 * KiB);
  CHECK(f.free_blocks == 3);
  CHECK(f.largest_free == 1 * MiB);
  CHECK(f.gap_ratio() == Approx(2.5 / 6.0));
  CHECK(f.external_fragmentation() == Approx(1.0 - 1.0 / 2.5));

  // The small block freed: [A, A+1M) is one free block.
  l.apply(block(format::BlockOp::kFree, A, 0));
  f = l.figures(0, 6);
  CHECK(f.free == 3 * MiB);
  CHECK(f.free_blocks == 3);
  CHECK(f.largest_free == 1 * MiB);

  // The large block freed and the second mapping unmapped (as the allocator shrinks an
  // expandable segment): [A, A+2M) is left, all free.
  l.apply(block(format::BlockOp::kFree, A + 1 * MiB, 0));
  l.apply(ev(Op::kUnmap, Kind::kVmmMap, A + 2 * MiB, 2 * MiB));
  f = l.figures(0, 7);
  CHECK(f.segments == 2);
  CHECK(f.reserved == 4 * MiB);
  CHECK(f.allocated == 1 * MiB);
  CHECK(f.free == 3 * MiB);
  CHECK(f.free_blocks == 2);
  CHECK(f.largest_free == 2 * MiB);

  // B given back with its block still live takes the block along (its free was not
  // reported): what is left is the 2 MiB mapping, free.
  l.apply(ev(Op::kFree, Kind::kDevice, B, 0));
  f = l.figures(0, 8);
  CHECK(f.segments == 1);
  CHECK(f.reserved == 2 * MiB);
  CHECK(f.allocated == 0);
  CHECK(f.free == 2 * MiB);
  l.apply(block(format::BlockOp::kAlloc, B, 1 * MiB));  // a block in no segment seen: not counted
  CHECK(l.figures(0, 9).allocated == 0);

  // Device 1: its one segment, its own figures.
  const CacheFigures g = l.figures(1, 8);
  CHECK(g.segments == 1);
  CHECK(g.free == 1 * MiB);
  CHECK(g.largest_free == 1 * MiB);
  // A device with nothing: all zero, ratios 0.
  const CacheFigures none = l.figures(3, 9);
  CHECK(none.segments == 0);
  CHECK(none.gap_ratio() == 0.0);
  CHECK(none.external_fragmentation() == 0.0);
}

TEST_CASE("cache layout: a block whose free waits on another stream is pending, neither allocated nor free") {
  CacheLayout l;
  l.apply(ev(Op::kAlloc, Kind::kDevice, B, 20 * MiB));
  l.apply(block(format::BlockOp::kAlloc, B, 8 * MiB));
  l.apply(block(format::BlockOp::kAlloc, B + 8 * MiB, 4 * MiB));
  BlockEvent waits = block(format::BlockOp::kFree, B, 8 * MiB);
  waits.flags = format::kBlockTraceEntry | format::kBlockPendingFree;
  l.apply(waits);
  // [B, B+8M) pending, [B+8M, B+12M) live, [B+12M, B+20M) free: one free block of 8 MiB.
  CacheFigures f = l.figures(0, 7);
  CHECK(f.reserved == 20 * MiB);
  CHECK(f.allocated == 4 * MiB);
  CHECK(f.pending == 8 * MiB);
  CHECK(f.free == 8 * MiB);
  CHECK(f.free_blocks == 1);
  CHECK(f.largest_free == 8 * MiB);
  // Its free completes: [B, B+8M) is a free block of its own (the live block lies between).
  l.apply(block(format::BlockOp::kFreeCompleted, B, format::kUnknown64));
  f = l.figures(0, 8);
  CHECK(f.pending == 0);
  CHECK(f.free == 16 * MiB);
  CHECK(f.free_blocks == 2);
  // A free-completed of a block that never waited changes nothing (the live one stays).
  l.apply(block(format::BlockOp::kFreeCompleted, B + 8 * MiB, format::kUnknown64));
  CHECK(l.figures(0, 9).allocated == 4 * MiB);
}

TEST_CASE("cache layout: segments in use, as empty_cache() sees them: a block spanning two mappings holds both") {
  CacheLayout l;
  l.apply(ev(Op::kMap, Kind::kVmmMap, A, 2 * MiB));
  l.apply(ev(Op::kMap, Kind::kVmmMap, A + 2 * MiB, 2 * MiB));
  l.apply(ev(Op::kMap, Kind::kVmmMap, A + 4 * MiB, 2 * MiB));
  l.apply(ev(Op::kAlloc, Kind::kDevice, B + 4 * MiB, 2 * MiB));
  l.apply(ev(Op::kAlloc, Kind::kDevice, C, 8 * MiB));  // no block: not the cache's, not listed
  // [A+1M, A+3M) spans the first two mappings; [A+4M, A+5M) lies in the third; [B+4M, ...)
  // held a block that was freed, and one pending free.
  l.apply(block(format::BlockOp::kAlloc, A + 1 * MiB, 2 * MiB));
  l.apply(block(format::BlockOp::kAlloc, A + 4 * MiB, 1 * MiB));
  l.apply(block(format::BlockOp::kAlloc, B + 4 * MiB, 1 * MiB));
  l.apply(block(format::BlockOp::kFree, B + 4 * MiB, 0));
  using List = std::vector<std::pair<uint64_t, bool>>;
  CHECK(l.segments_in_use(0) == List{{A, true}, {A + 2 * MiB, true}, {A + 4 * MiB, true}, {B + 4 * MiB, false}});
  // The spanning block freed: the first two mappings are free; the third's block waits on
  // another stream: still in use (its memory cannot be given back yet).
  l.apply(block(format::BlockOp::kFree, A + 1 * MiB, 0));
  BlockEvent waiting = block(format::BlockOp::kFree, A + 4 * MiB, 0);
  waiting.flags = format::kBlockPendingFree;
  l.apply(waiting);
  CHECK(l.segments_in_use(0) == List{{A, false}, {A + 2 * MiB, false}, {A + 4 * MiB, true}, {B + 4 * MiB, false}});
  CHECK(l.segments_in_use(1).empty());
}
