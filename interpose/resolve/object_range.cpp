#include "resolve/object_range.h"

#include <algorithm>

namespace cumemtrace::interpose {

AddressRange load_segments_range(const dl_phdr_info& info) {
  AddressRange r{~0ull, 0};
  for (int k = 0; k < info.dlpi_phnum; ++k) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[k];
    if (ph.p_type != PT_LOAD) continue;
    r.start = std::min<uint64_t>(r.start, info.dlpi_addr + ph.p_vaddr);
    r.end = std::max<uint64_t>(r.end, info.dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  return r.end ? r : AddressRange{};
}

AddressRange loaded_object_range(const void* address) {
  struct Ctx {
    uint64_t address;
    AddressRange found;
  } ctx{reinterpret_cast<uint64_t>(address), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* i, size_t, void* p) {
        auto* c = static_cast<Ctx*>(p);
        const AddressRange r = load_segments_range(*i);
        if (!r.contains(c->address)) return 0;
        c->found = r;
        return 1;
      },
      &ctx);
  return ctx.found;
}

}  // namespace cumemtrace::interpose
