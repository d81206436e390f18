// CUDA arrays: cuArrayCreate, cuArray3DCreate, cuMipmappedArrayCreate and their destroys.
//
// An array's texels take a block of the device heap, so the device's used memory (what
// the NVML-like figures show) moves as a real driver's would. Its size: width x
// max(height,1) x max(depth,1) x NumChannels x the channel bytes of Format, the classic
// formats only (8/16/32-bit integers, HALF, FLOAT); any other format is refused with
// CUDA_ERROR_INVALID_VALUE. A mipmapped array takes the sum over its levels, each level
// halving width, height and (unless layered or cubemap) depth, at least 1. A real driver
// pads for its texture layout; the sim does not (docs/simulated-driver.md).
#include "driver_state.h"
#include "sim_export.h"

using namespace sim;

namespace {

uint64_t channel_bytes(CUarray_format f) {
    switch (f) {
        case CU_AD_FORMAT_UNSIGNED_INT8:
        case CU_AD_FORMAT_SIGNED_INT8: return 1;
        case CU_AD_FORMAT_UNSIGNED_INT16:
        case CU_AD_FORMAT_SIGNED_INT16:
        case CU_AD_FORMAT_HALF: return 2;
        case CU_AD_FORMAT_UNSIGNED_INT32:
        case CU_AD_FORMAT_SIGNED_INT32:
        case CU_AD_FORMAT_FLOAT: return 4;
        default: return 0;
    }
}

// Texels of one level times bytes each; nullopt past 64 bits.
std::optional<uint64_t> level_bytes(uint64_t w, uint64_t h, uint64_t d, uint64_t texel) {
    auto wh = multiply(w ? w : 1, h ? h : 1);
    auto whd = wh ? multiply(*wh, d ? d : 1) : std::nullopt;
    return whd ? multiply(*whd, texel) : std::nullopt;
}

CUresult create(uint64_t bytes, bool mipmapped, uint64_t *handle) {
    Ctx *ctx;
    if (CUresult r = require_ctx(&ctx)) return r;
    State &s = state();
    Device &d = *s.devices[ctx->device];
    if (!fits(ctx->device, d.heap.granules_needed(bytes))) return CUDA_ERROR_OUT_OF_MEMORY;
    auto addr = d.heap.allocate(bytes, ctx);
    if (!addr) return CUDA_ERROR_OUT_OF_MEMORY;
    *handle = s.next_array++;
    s.arrays.emplace(*handle, Array{*addr, ctx, mipmapped});
    return CUDA_SUCCESS;
}

CUresult destroy(uint64_t handle, bool mipmapped) {
    if (CUresult r = check_init()) return r;
    State &s = state();
    auto it = s.arrays.find(handle);
    if (it == s.arrays.end() || it->second.mipmapped != mipmapped) return CUDA_ERROR_INVALID_HANDLE;
    s.devices[it->second.ctx->device]->heap.release(it->second.heap_addr);
    s.arrays.erase(it);
    return CUDA_SUCCESS;
}

bool valid_3d(const CUDA_ARRAY3D_DESCRIPTOR *a) {
    return a && a->Width && channel_bytes(a->Format) &&
           (a->NumChannels == 1 || a->NumChannels == 2 || a->NumChannels == 4);
}

}  // namespace

SIM_API CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *a) {
    SIM_LOCKED;
    if (!pHandle || !a) return CUDA_ERROR_INVALID_VALUE;
    const CUDA_ARRAY3D_DESCRIPTOR as3d{a->Width, a->Height, 0, a->Format, a->NumChannels, 0};
    if (!valid_3d(&as3d)) return CUDA_ERROR_INVALID_VALUE;
    auto bytes = level_bytes(a->Width, a->Height, 1, channel_bytes(a->Format) * a->NumChannels);
    if (!bytes) return CUDA_ERROR_OUT_OF_MEMORY;
    uint64_t h = 0;
    CUresult r = create(*bytes, false, &h);
    if (r == CUDA_SUCCESS) *pHandle = reinterpret_cast<CUarray>(h);
    return r;
}

SIM_API CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *a) {
    SIM_LOCKED;
    if (!pHandle || !valid_3d(a)) return CUDA_ERROR_INVALID_VALUE;
    auto bytes = level_bytes(a->Width, a->Height, a->Depth, channel_bytes(a->Format) * a->NumChannels);
    if (!bytes) return CUDA_ERROR_OUT_OF_MEMORY;
    uint64_t h = 0;
    CUresult r = create(*bytes, false, &h);
    if (r == CUDA_SUCCESS) *pHandle = reinterpret_cast<CUarray>(h);
    return r;
}

SIM_API CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *a,
                                        unsigned int numLevels) {
    SIM_LOCKED;
    if (!pHandle || !valid_3d(a) || numLevels == 0 || numLevels > 32) return CUDA_ERROR_INVALID_VALUE;
    const bool layers = a->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP);
    const uint64_t texel = channel_bytes(a->Format) * a->NumChannels;
    uint64_t total = 0;
    for (unsigned l = 0; l < numLevels; ++l) {
        auto at = [l](uint64_t x) -> uint64_t { return x == 0 ? 0 : std::max<uint64_t>(x >> l, 1); };
        auto bytes = level_bytes(at(a->Width), at(a->Height), layers ? a->Depth : at(a->Depth), texel);
        if (!bytes || total + *bytes < total) return CUDA_ERROR_OUT_OF_MEMORY;
        total += *bytes;
    }
    uint64_t h = 0;
    CUresult r = create(total, true, &h);
    if (r == CUDA_SUCCESS) *pHandle = reinterpret_cast<CUmipmappedArray>(h);
    return r;
}

SIM_API CUresult cuArrayDestroy(CUarray hArray) {
    SIM_LOCKED;
    return destroy(reinterpret_cast<uint64_t>(hArray), false);
}

SIM_API CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray) {
    SIM_LOCKED;
    return destroy(reinterpret_cast<uint64_t>(hMipmappedArray), true);
}
