// CUDA IPC: cuIpcGetMemHandle, cuIpcOpenMemHandle_v2, cuIpcCloseMemHandle, and VMM
// sharing (cuMemExportToShareableHandle, cuMemImportFromShareableHandle).
//
// The sim is one process, so it cannot map another process's memory. What it does:
// a handle carries "simcuIPC", the exporter's pid, its device and the exported
// allocation's start and size (the layout below, which tests may also craft by hand).
// Opening one, from any process and also from the exporter itself (a real driver refuses
// that), maps the size into address space of the device's VMM region: cuMemGetAddressRange
// and cuPointerGetAttribute then answer for it, but no memory of this device is taken,
// since the exporter holds it. Closing gives the address space back.
#include "driver_state.h"
#include "locate.h"
#include "sim_export.h"

#include <unistd.h>

#include <cstring>

using namespace sim;

namespace {

struct WireHandle {  // the first 32 of CU_IPC_HANDLE_SIZE bytes; the rest are zero
    char magic[8];
    uint32_t pid;
    int32_t device;
    uint64_t address;
    uint64_t size;
};
static_assert(sizeof(WireHandle) <= CU_IPC_HANDLE_SIZE);
constexpr char kMagic[8] = {'s', 'i', 'm', 'c', 'u', 'I', 'P', 'C'};

CUresult open_handle(CUdeviceptr *pdptr, const CUipcMemHandle &handle, unsigned int Flags) {
    Ctx *ctx;
    if (CUresult r = require_ctx(&ctx)) return r;
    if (!pdptr || (Flags & ~unsigned(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))) return CUDA_ERROR_INVALID_VALUE;
    WireHandle w;
    std::memcpy(&w, handle.reserved, sizeof w);
    if (std::memcmp(w.magic, kMagic, sizeof kMagic) != 0 || !valid_device(w.device) || w.size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    auto reserved = round_up(w.size, kGranule);
    if (!reserved) return CUDA_ERROR_OUT_OF_MEMORY;
    State &s = state();
    auto got = s.devices[w.device]->vmm_space.take(*reserved, kGranule);
    if (!got) return CUDA_ERROR_OUT_OF_MEMORY;
    s.imports.emplace(*got, Import{w.size, *reserved, w.device});
    *pdptr = *got;
    return CUDA_SUCCESS;
}

}  // namespace

SIM_API CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!pHandle) return CUDA_ERROR_INVALID_VALUE;
    auto where = locate(dptr);
    if (!where || where->kind != Kind::Heap) return CUDA_ERROR_INVALID_VALUE;  // cuMemAlloc memory only
    WireHandle w{};
    std::memcpy(w.magic, kMagic, sizeof kMagic);
    w.pid = uint32_t(getpid());
    w.device = where->device;
    w.address = where->start;
    w.size = where->size;
    std::memset(pHandle, 0, sizeof *pHandle);
    std::memcpy(pHandle->reserved, &w, sizeof w);
    return CUDA_SUCCESS;
}

SIM_API CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags) {
    SIM_LOCKED;
    return open_handle(pdptr, handle, Flags);
}

// The CUDA 4.1 ABI, the same call.
SIM_API CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags) {
    SIM_LOCKED;
    return open_handle(pdptr, handle, Flags);
}

SIM_API CUresult cuIpcCloseMemHandle(CUdeviceptr dptr) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    State &s = state();
    auto it = s.imports.find(dptr);
    if (it == s.imports.end()) return CUDA_ERROR_INVALID_VALUE;
    s.devices[it->second.device]->vmm_space.give_back(dptr, it->second.reserved);
    s.imports.erase(it);
    return CUDA_SUCCESS;
}

// A file descriptor standing for the handle: the sim has no fd to give, so a number
// no open() returns in a test (the handle's low bits, negated), written as an int.
SIM_API CUresult cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
                                              CUmemAllocationHandleType handleType, unsigned long long flags) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    State &s = state();
    auto h = s.handles.find(handle);
    if (!shareableHandle || flags != 0 || h == s.handles.end()) return CUDA_ERROR_INVALID_VALUE;
    if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
        !(h->second.prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        return CUDA_ERROR_NOT_SUPPORTED;
    *static_cast<int *>(shareableHandle) = -int(handle & 0xffff) - 1;
    return CUDA_SUCCESS;
}

// The other half: the "fd" names a handle exported above (any process's, in a real driver).
// The import is a new handle on the same memory, which takes none of this device's: the
// exporter holds it. Released like any handle; its memory outlives it in the exporter.
SIM_API CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
                                                CUmemAllocationHandleType shHandleType) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!handle || shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_INVALID_VALUE;
    // A POSIX fd travels by value in the pointer (cuda.h, CUmemAllocationHandleType).
    const int fd = int(reinterpret_cast<intptr_t>(osHandle));
    if (fd >= 0) return CUDA_ERROR_INVALID_VALUE;
    const uint64_t low = uint64_t(-(fd + 1));
    State &s = state();
    for (auto &[id, h] : s.handles) {
        if ((id & 0xffff) != low || h.imported || h.refs == 0) continue;
        VmmHandle copy{h.prop, h.size, h.device, 1, 0, true};
        const uint64_t mine = s.next_handle++;
        s.handles.emplace(mine, copy);
        *handle = mine;
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}
