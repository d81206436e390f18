// The page's flame graph over a time range (reports/timeline/range_flame.h), as the page's
// JSON: its stacks named and its buckets written as changes.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/timeline/range_flame.h"

namespace cumemtrace {

// The stack of a live allocation as the flame graph draws it: label indices, outermost first.
using PathOf = std::function<const std::vector<uint32_t>&(uint32_t stack_id, uint32_t python_stack_id)>;

// {start_ns, bucket_ns, buckets, paths, devices: [{device, buckets: [[k, t, tracked,
// [path, bytes, ...]]]}]}: bucket k is [start_ns + k × bucket_ns, + bucket_ns); each
// bucket's live bytes by path as a change from the device's bucket before it (a path's
// bytes hold until a later bucket names it again; 0: gone). Paths are numbered as first
// met: stop by stop, device by device, within a bucket in its order (by stack id).
nlohmann::ordered_json range_flame_json(const RangeFlame& flames, const PathOf& path_of);

}  // namespace cumemtrace
