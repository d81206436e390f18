// Primary and created contexts, and the per-thread context stack.
#include "driver_state.h"
#include "sim_export.h"

using namespace sim;

namespace {

CUresult release_primary(CUdevice dev) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    Ctx &p = state().devices[dev]->primary;
    if (p.refcount == 0) return CUDA_ERROR_INVALID_CONTEXT;
    // The handle survives (a later retain revives the same one), but the
    // context and its cuMemAlloc memory are gone, as on the real driver.
    if (--p.refcount == 0) context_died(&p);
    return CUDA_SUCCESS;
}

CUresult create(CUcontext *pctx, unsigned int flags, CUdevice dev) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    if (ctx_stack().full()) return CUDA_ERROR_OUT_OF_MEMORY;
    State &s = state();
    s.created_contexts.push_back(std::make_unique<Ctx>(Ctx{dev, false, false, 0, flags}));
    Ctx *c = s.created_contexts.back().get();
    s.all_contexts.insert(c);
    context_went_live(c);
    ctx_stack().push(c);
    *pctx = to_handle(c);
    return CUDA_SUCCESS;
}

CUresult destroy(CUcontext ctx) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    Ctx *c = from_handle(ctx);
    if (!valid_ctx(c) || c->primary) return CUDA_ERROR_INVALID_CONTEXT;
    context_died(c);
    auto &stack = ctx_stack();
    if (!stack.empty() && stack.top() == c) stack.pop();
    return CUDA_SUCCESS;
}

CUresult push(CUcontext ctx) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!valid_ctx(from_handle(ctx))) return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx_stack().full()) return CUDA_ERROR_OUT_OF_MEMORY;
    ctx_stack().push(from_handle(ctx));
    return CUDA_SUCCESS;
}

CUresult pop(CUcontext *pctx) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    auto &stack = ctx_stack();
    if (stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
    if (pctx) *pctx = to_handle(stack.top());
    stack.pop();
    return CUDA_SUCCESS;
}

CUresult get_device(CUdevice *device, CUcontext ctx) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    Ctx *c = ctx ? from_handle(ctx) : current_ctx();
    if (!valid_ctx(c)) return CUDA_ERROR_INVALID_CONTEXT;
    *device = c->device;
    return CUDA_SUCCESS;
}

CUresult synchronize(CUcontext ctx) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    Ctx *c = ctx ? from_handle(ctx) : current_ctx();
    if (!valid_ctx(c)) return CUDA_ERROR_INVALID_CONTEXT;
    trim_pools_on_sync(c->device);
    return CUDA_SUCCESS;
}

}  // namespace

SIM_API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    Ctx &p = state().devices[dev]->primary;
    if (p.refcount++ == 0) context_went_live(&p);
    *pctx = to_handle(&p);
    return CUDA_SUCCESS;
}

SIM_API CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return release_primary(dev); }

// Destroys the primary context's allocations and state whatever its references (cuda.h);
// the next retain starts it afresh. Resetting an inactive one is no error.
static CUresult reset_primary(CUdevice dev) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    Ctx &p = state().devices[dev]->primary;
    if (p.refcount > 0) context_died(&p);
    p.refcount = 0;
    return CUDA_SUCCESS;
}
SIM_API CUresult cuDevicePrimaryCtxReset(CUdevice dev) { return reset_primary(dev); }

SIM_API CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    const Ctx &p = state().devices[dev]->primary;
    *flags = p.flags;
    *active = p.alive ? 1 : 0;
    return CUDA_SUCCESS;
}
SIM_API CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) { return reset_primary(dev); }
SIM_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) { return release_primary(dev); }

SIM_API CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev) { return create(pctx, flags, dev); }
SIM_API CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) { return create(pctx, flags, dev); }
SIM_API CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *, int numParams, unsigned int flags,
                                CUdevice dev) {
    if (numParams < 0) return CUDA_ERROR_INVALID_VALUE;
    return create(pctx, flags, dev);
}
SIM_API CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *, unsigned int flags, CUdevice dev) {
    return create(pctx, flags, dev);
}

SIM_API CUresult cuCtxDestroy(CUcontext ctx) { return destroy(ctx); }
SIM_API CUresult cuCtxDestroy_v2(CUcontext ctx) { return destroy(ctx); }
SIM_API CUresult cuCtxPushCurrent(CUcontext ctx) { return push(ctx); }
SIM_API CUresult cuCtxPushCurrent_v2(CUcontext ctx) { return push(ctx); }
SIM_API CUresult cuCtxPopCurrent(CUcontext *pctx) { return pop(pctx); }
SIM_API CUresult cuCtxPopCurrent_v2(CUcontext *pctx) { return pop(pctx); }

SIM_API CUresult cuCtxSetCurrent(CUcontext ctx) {
    const CaptureSafeCall safe;  // the runtime sets it on every new thread
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    auto &stack = ctx_stack();
    if (!ctx) {
        if (!stack.empty()) stack.pop();
        return CUDA_SUCCESS;
    }
    if (!valid_ctx(from_handle(ctx))) return CUDA_ERROR_INVALID_CONTEXT;
    if (stack.empty()) stack.push(from_handle(ctx));
    else stack.set_top(from_handle(ctx));
    return CUDA_SUCCESS;
}

SIM_API CUresult cuCtxGetCurrent(CUcontext *pctx) {
    SIM_LOCKED;
    const CaptureSafeCall safe;  // the runtime asks it before every call
    if (CUresult r = check_init()) return r;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = to_handle(current_ctx());
    return CUDA_SUCCESS;
}

SIM_API CUresult cuCtxGetDevice(CUdevice *device) { return get_device(device, nullptr); }
SIM_API CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx) { return get_device(device, ctx); }
SIM_API CUresult cuCtxSynchronize(void) { return synchronize(nullptr); }
SIM_API CUresult cuCtxSynchronize_v2(CUcontext ctx) { return synchronize(ctx); }
