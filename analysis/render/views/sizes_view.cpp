// `report --view sizes`: heaptrack's allocation histogram, for device memory: how many
// allocations fell in each power-of-two range of sizes, and their bytes. Many small ones
// are what a caching allocator's small pool exists for; a few very large ones are what
// fragmentation and out-of-memory errors come from.
#include <algorithm>

#include "base/plural.h"
#include "base/units.h"
#include "render/views/views.h"

namespace cumemtrace {
namespace {

constexpr size_t kBar = 40;  // '#' of the bucket with the most allocations

}  // namespace

void write_sizes_view(std::ostream& out, const AllocationStats& st, const ViewContext&) {
  out << "Allocation sizes (device memory: " << count_of(st.allocations, "allocation") << ", " << iec_exact(st.bytes)
      << " in all)\n";
  if (st.sizes.empty()) {
    out << "  none\n";
    return;
  }
  out << "  each row: sizes from the first up to (not including) the second, allocations, and their bytes\n";
  uint64_t most = 0;
  for (const auto& b : st.sizes) most = std::max(most, b.allocations);
  for (const auto& b : st.sizes) {
    std::string range = size_range(b.log2);
    range.resize(std::max<size_t>(range.size(), 22), ' ');
    std::string n = std::to_string(b.allocations);
    n = std::string(n.size() < 10 ? 10 - n.size() : 0, ' ') + n;
    // Rounded up: a bucket with any allocation shows at least one '#'.
    const size_t bar = size_t((b.allocations * kBar + most - 1) / most);
    std::string bars(bar, '#');
    bars.resize(kBar, ' ');
    out << "  " << range << n << "  " << bars << "  " << iec_exact(b.bytes) << "\n";
  }
}

}  // namespace cumemtrace
