// Virtual memory management: reservations (address only), physical handles
// (capacity only) and the mappings between them. Physical memory goes back to
// the device only when its handle has been released AND no mapping still uses
// it, which is what PyTorch's expandable segments rely on.
#include "driver_state.h"
#include "sim_export.h"

using namespace sim;

namespace {

bool valid_prop(const CUmemAllocationProp *prop) {
    return prop && prop->type == CU_MEM_ALLOCATION_TYPE_PINNED && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
           valid_device(prop->location.id);
}

void drop_if_unused(std::map<uint64_t, VmmHandle>::iterator h) {
    if (h->second.refs > 0 || h->second.maps > 0) return;
    if (!h->second.imported) state().devices[h->second.device]->vmm_granules -= h->second.size / kGranule;
    state().handles.erase(h);
}

// The mappings that exactly tile [ptr, ptr+size), in order; empty if they don't.
std::vector<std::map<uint64_t, Mapping>::iterator> tiling(uint64_t ptr, uint64_t size) {
    std::vector<std::map<uint64_t, Mapping>::iterator> out;
    auto &maps = state().mappings;
    uint64_t cursor = ptr;
    for (auto m = maps.find(ptr); m != maps.end() && m->first == cursor && cursor < ptr + size; ++m) {
        out.push_back(m);
        cursor += m->second.size;
    }
    if (cursor != ptr + size) out.clear();
    return out;
}

const Reservation *reservation_holding(uint64_t ptr, uint64_t size) {
    auto &res = state().reservations;
    auto r = res.upper_bound(ptr);
    if (r == res.begin()) return nullptr;
    --r;
    if (ptr - r->first >= r->second.size || size > r->second.size - (ptr - r->first)) return nullptr;
    return &r->second;
}

}  // namespace

SIM_API CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                               CUmemAllocationGranularity_flags option) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!granularity || !valid_prop(prop) || option > CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
        return CUDA_ERROR_INVALID_VALUE;
    *granularity = kGranule;  // minimum and recommended alike on the H200
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                     unsigned long long flags) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!ptr || size == 0 || size % kGranule || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (alignment & (alignment - 1)) return CUDA_ERROR_INVALID_VALUE;
    State &s = state();
    // Unified addressing: one VA for all devices. Take it from the current
    // device's region so that ranges stay apart per device in traces.
    Ctx *ctx = current_ctx();
    int dev = ctx ? ctx->device : 0;
    uint64_t align = alignment > kGranule ? alignment : kGranule;
    std::optional<uint64_t> got;
    if (addr && addr % align == 0)  // a hint, honoured when the range is free
        for (auto &d : s.devices)
            if (d->vmm_space.contains(addr) && d->vmm_space.take_at(addr, size)) got = addr, dev = d->ordinal;
    if (!got) got = s.devices[dev]->vmm_space.take(size, align);
    if (!got) return CUDA_ERROR_OUT_OF_MEMORY;
    s.reservations.emplace(*got, Reservation{size, dev});
    *ptr = *got;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    State &s = state();
    auto r = s.reservations.find(ptr);
    if (r == s.reservations.end() || r->second.size != size) return CUDA_ERROR_INVALID_VALUE;
    auto m = s.mappings.lower_bound(ptr);
    if (m != s.mappings.end() && m->first < ptr + size) return CUDA_ERROR_INVALID_VALUE;  // unmap first
    s.devices[r->second.device]->vmm_space.give_back(ptr, size);
    s.reservations.erase(r);
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                             unsigned long long flags) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!handle || !valid_prop(prop) || flags != 0 || size == 0 || size % kGranule) return CUDA_ERROR_INVALID_VALUE;
    // No IMEX channel here, as on most hosts: what PyTorch's expandable segments meet when
    // they try a fabric handle before a POSIX fd (H200 run L).
    if (prop->requestedHandleTypes & CU_MEM_HANDLE_TYPE_FABRIC) return CUDA_ERROR_NOT_PERMITTED;
    State &s = state();
    int dev = prop->location.id;
    if (!fits(dev, size / kGranule)) return CUDA_ERROR_OUT_OF_MEMORY;
    s.devices[dev]->vmm_granules += size / kGranule;
    uint64_t id = s.next_handle++;
    s.handles.emplace(id, VmmHandle{*prop, size, dev, 1, 0});
    *handle = id;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    auto h = state().handles.find(handle);
    if (h == state().handles.end() || h->second.refs == 0) return CUDA_ERROR_INVALID_VALUE;
    --h->second.refs;
    drop_if_unused(h);
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                          unsigned long long flags) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    State &s = state();
    auto h = s.handles.find(handle);
    if (h == s.handles.end() || h->second.refs == 0) return CUDA_ERROR_INVALID_HANDLE;
    if (flags != 0 || size == 0 || size % kGranule || offset % kGranule || ptr % kGranule)
        return CUDA_ERROR_INVALID_VALUE;
    if (offset > h->second.size || size > h->second.size - offset) return CUDA_ERROR_INVALID_VALUE;
    if (!reservation_holding(ptr, size)) return CUDA_ERROR_INVALID_VALUE;
    auto next = s.mappings.lower_bound(ptr);
    if (next != s.mappings.end() && next->first < ptr + size) return CUDA_ERROR_INVALID_VALUE;
    if (next != s.mappings.begin() && std::prev(next)->first + std::prev(next)->second.size > ptr)
        return CUDA_ERROR_INVALID_VALUE;
    s.mappings.emplace(ptr, Mapping{size, handle, offset});
    ++h->second.maps;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    auto maps = tiling(ptr, size);
    if (maps.empty()) return CUDA_ERROR_INVALID_VALUE;
    State &s = state();
    for (auto m : maps) {
        auto h = s.handles.find(m->second.handle);
        s.mappings.erase(m);
        --h->second.maps;
        drop_if_unused(h);
    }
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!desc || count == 0 || tiling(ptr, size).empty()) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i)
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || !valid_device(desc[i].location.id) ||
            desc[i].flags > CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;  // access is not modelled: nothing can touch the memory anyway
}

SIM_API CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                        CUmemGenericAllocationHandle handle) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    auto h = state().handles.find(handle);
    if (!prop || h == state().handles.end()) return CUDA_ERROR_INVALID_VALUE;
    *prop = h->second.prop;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!handle) return CUDA_ERROR_INVALID_VALUE;
    State &s = state();
    uint64_t p = reinterpret_cast<uint64_t>(addr);
    auto m = s.mappings.upper_bound(p);
    if (m == s.mappings.begin()) return CUDA_ERROR_INVALID_VALUE;
    --m;
    if (p - m->first >= m->second.size) return CUDA_ERROR_INVALID_VALUE;
    ++s.handles.at(m->second.handle).refs;
    *handle = m->second.handle;
    return CUDA_SUCCESS;
}
