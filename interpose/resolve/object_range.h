// Address ranges of loaded objects, from their PT_LOAD segments.
#pragma once

#include <link.h>

#include <cstdint>

namespace cumemtrace::interpose {

struct AddressRange {
  uint64_t start = 0, end = 0;  // [start, end); empty when start == end
  bool contains(uint64_t a) const { return a >= start && a < end; }
};

// From the lowest to one past the highest byte of `info`'s PT_LOAD segments.
AddressRange load_segments_range(const dl_phdr_info& info);

// The range of the loaded object that contains `address` (e.g. dladdr's dli_fbase);
// empty if none. Walks the loader's list: call it inside a LoaderUse.
AddressRange loaded_object_range(const void* address);

}  // namespace cumemtrace::interpose
