// `report --view temporary`: heaptrack's temporary allocations (allocation_stats.h), for
// device memory: the call sites that allocate only to free before allocating again, each
// a driver call (and often a synchronisation) a kept buffer would save.
#include "base/plural.h"
#include "base/units.h"
#include "render/views/views.h"

namespace cumemtrace {

void write_temporary_view(std::ostream& out, const AllocationStats& st, const ViewContext& ctx) {
  out << "Temporary allocations, freed before any other allocation was made (device memory: " << st.temporary << " of "
      << count_of(st.allocations, "allocation") << ")\n";
  const std::vector<const SiteAllocations*> rows = ranked_by_temporary(st);
  if (rows.empty()) out << "  none\n";
  for (size_t i = 0; i < rows.size() && i < ctx.top; ++i) {
    const SiteAllocations& s = *rows[i];
    out << "  " << i + 1 << ". " << s.temporary << " of " << count_of(s.allocations, "allocation") << " temporary ("
        << (s.temporary * 100 + s.allocations / 2) / s.allocations << " %), " << iec_exact(s.temporary_bytes) << ": "
        << view_site_name(s, ctx) << "\n";
    write_site_stack(out, s, ctx, "       ");
  }
  if (rows.size() > ctx.top) out << "  ... and " << count_of(rows.size() - ctx.top, "more call site") << "\n";
}

}  // namespace cumemtrace
