// `report --view top-allocations`: heaptrack's "most allocations" ranking, for device
// memory: the call sites that call the allocator most often, whatever they hold.
#include "base/plural.h"
#include "base/units.h"
#include "render/views/views.h"

namespace cumemtrace {

void write_top_allocations_view(std::ostream& out, const AllocationStats& st, const ViewContext& ctx) {
  out << "Call sites by number of allocations (device memory: " << count_of(st.allocations, "allocation") << ", "
      << iec_exact(st.bytes) << " in all)\n";
  const std::vector<const SiteAllocations*> rows = ranked_by_allocations(st);
  if (rows.empty()) out << "  none\n";
  for (size_t i = 0; i < rows.size() && i < ctx.top; ++i) {
    const SiteAllocations& s = *rows[i];
    out << "  " << i + 1 << ". " << count_of(s.allocations, "allocation") << ", " << iec_exact(s.bytes) << ": "
        << view_site_name(s, ctx) << "\n";
    write_site_stack(out, s, ctx, "       ");
  }
  if (rows.size() > ctx.top) out << "  ... and " << count_of(rows.size() - ctx.top, "more call site") << "\n";
}

}  // namespace cumemtrace
