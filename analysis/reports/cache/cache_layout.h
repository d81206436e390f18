// Inside a caching allocator's segments at one moment (docs/fragmentation.md, "Inside a
// cache"): the same terms as the driver's view, one level down. A segment that holds or
// held a block is the cache's arena; a free block, a run of it no live block covers, is
// its gap. Expandable segments are mappings (cuMemMap) side by side in one reservation: a
// run of adjacent mappings is one segment, and a free block may span two of them. A block
// freed while other streams still use it (a `free` marked pending) is neither allocated nor
// free until its `free-completed`: pending.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "read/event_source.h"
#include "read/reader.h"

namespace cumemtrace {

struct CacheFigures {
  uint64_t time_ns = 0;
  uint64_t reserved = 0;      // bytes of the segments that hold or held blocks
  uint64_t allocated = 0;     // bytes of the live blocks in them
  uint64_t pending = 0;       // bytes of blocks freed and waiting on other streams' events
  uint64_t free = 0;          // reserved - allocated - pending: free inside the cache
  uint64_t largest_free = 0;  // the largest free block
  uint64_t free_blocks = 0;   // how many free blocks
  uint64_t segments = 0;
  // free / reserved (0 with nothing reserved): the part of the cache no tensor uses.
  double gap_ratio() const { return reserved ? double(free) / double(reserved) : 0.0; }
  // 1 - largest free block / free (0 with nothing free): 0 when what is free is one block.
  double external_fragmentation() const { return free ? 1.0 - double(largest_free) / double(free) : 0.0; }
};

// Fed the trace's events and block records in file order (read/in_file_order.h).
class CacheLayout {
 public:
  void apply(const Event& e);
  void apply(const BlockEvent& b);
  // `device`'s figures now: O(its segments + its live blocks).
  CacheFigures figures(int32_t device, uint64_t time_ns) const;
  // `device`'s segments (each allocation, each mapping) that hold or held blocks, by
  // address, each with whether a live or pending block lies in it now: what
  // torch.cuda.empty_cache() could not give back (holders.h, map_segments).
  std::vector<std::pair<uint64_t, bool>> segments_in_use(int32_t device) const;

 private:
  struct Segment {
    uint64_t size = 0;
    int32_t device = -1;
    bool mapping = false;  // a mapping of an expandable segment
    bool holds = false;    // a block lay in it
  };
  struct Block {
    uint64_t size = 0;
    int32_t device = -1;
    bool pending = false;  // freed, waiting on other streams' events
  };
  std::map<uint64_t, Segment> segments_;  // by address (one address space: unified addressing)
  std::map<uint64_t, Block> blocks_;      // live and pending blocks, by address
};

// CacheLayout::segments_in_use just before each event asked for, as (event index, device),
// in one scan of the events; none where the trace's block records were not on at that
// event's time (nothing recorded, or turned off before it). `allocator`: the display name
// of the allocator whose `on` record began them ("" when none did).
struct SegmentsAt {
  size_t event_index = 0;
  int32_t device = -1;
  uint64_t time_ns = 0;
};
struct SegmentsInUse {
  std::string allocator;
  std::vector<std::vector<std::pair<uint64_t, bool>>> at;  // one per SegmentsAt
};
SegmentsInUse segments_in_use_at(const Trace& trace, const EventSource& events, const std::vector<SegmentsAt>& at);

}  // namespace cumemtrace
