#include "driver_state.h"

#include <pthread.h>

#include <type_traits>

namespace sim {
namespace {

State *g_state = nullptr;
// Bumped by reset and fork so that per-thread context stacks from an older
// state are treated as empty instead of pointing into freed objects.
uint64_t g_generation = 1;

struct ThreadStack {
    uint64_t generation;  // 0 (zero-initialized): never used yet
    CtxStack stack;
};
// Zero-initialized, no constructor or destructor: see CtxStack.
thread_local ThreadStack t_stack;
static_assert(std::is_trivially_destructible_v<ThreadStack>);
static_assert(std::is_trivially_default_constructible_v<ThreadStack>);

// A child of fork() inherits the parent's driver state on paper but, on real
// hardware, cannot use the parent's contexts. Keep the lock consistent across
// fork, and in the child start from a state that refuses every call.
void before_fork() { driver_mutex().lock(); }
void after_fork_parent() { driver_mutex().unlock(); }
// The parent's state, left behind in a child on purpose: kept reachable so that leak
// checkers (the ASan build of the tests) do not report it.
State *volatile g_parent_state = nullptr;  // volatile: a store the compiler must keep

void after_fork_child() {
    if (g_state && g_state->initialized) {
        g_parent_state = g_state;
        g_state = new State{};
        g_state->cfg = read_config();
        g_state->forked_child = true;
        for (int d = 0; d < g_state->cfg.devices; ++d) g_state->devices.push_back(std::make_unique<Device>(d));
        ++g_generation;
    }
    driver_mutex().unlock();
}

void build(State &s) {
    s.cfg = read_config();
    for (int d = 0; d < s.cfg.devices; ++d) {
        s.devices.push_back(std::make_unique<Device>(d));
        s.all_contexts.insert(&s.devices.back()->primary);
    }
}

}  // namespace

Device::Device(int ordinal)
    : ordinal(ordinal), heap(kHeapBase + uint64_t(ordinal) * kDeviceStride, kHeapLength),
      async_space(kAsyncBase + uint64_t(ordinal) * kDeviceStride, kAsyncLength),
      vmm_space(kVmmBase + uint64_t(ordinal) * kDeviceStride, kVmmLength), primary{ordinal, true, false, 0, 0} {}

std::mutex &driver_mutex() {
    static std::mutex m;  // never destroyed before atexit handlers that call in
    return m;
}

State &state() {
    if (!g_state) {
        // Leaked on purpose: exit-time hooks of the preload library may still call in.
        g_state = new State{};
        build(*g_state);
        static bool registered = (pthread_atfork(before_fork, after_fork_parent, after_fork_child), true);
        (void)registered;
    }
    return *g_state;
}

void reset_state() {
    delete g_state;
    g_state = nullptr;
    ++g_generation;
    state();
}

CtxStack &ctx_stack() {
    if (t_stack.generation != g_generation) {
        t_stack.stack.clear();
        t_stack.generation = g_generation;
    }
    return t_stack.stack;
}

Ctx *current_ctx() {
    auto &s = ctx_stack();
    if (s.empty() || !s.top()->alive) return nullptr;
    return s.top();
}

CUresult check_init() {
    State &s = state();
    if (s.forked_child || !s.initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (on_callback_thread()) return CUDA_ERROR_NOT_PERMITTED;
    return capture_guard();
}

CUresult require_ctx(Ctx **out) {
    if (CUresult r = check_init()) return r;
    Ctx *c = current_ctx();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    *out = c;
    return CUDA_SUCCESS;
}

bool valid_ctx(const Ctx *ctx) { return ctx && state().all_contexts.count(ctx) && ctx->alive; }

bool valid_device(int ordinal) { return ordinal >= 0 && ordinal < state().cfg.devices; }

uint64_t footprint_granules(int device) {
    State &s = state();
    const Device &d = *s.devices[device];
    uint64_t g = d.heap.granules() + d.vmm_granules;
    for (const auto &[key, pool] : s.pools)
        if (pool->device == device) g += pool->granules();
    return g + graph_pool_granules(device);
}

uint64_t device_used_bytes(int device) {
    State &s = state();
    const Device &d = *s.devices[device];
    // Saturating: SIMCUDA_CONTEXT_BYTES/HIDDEN_BYTES may be absurd, and a
    // wrapped sum would show a full device as nearly empty.
    uint64_t bytes = multiply(footprint_granules(device), kGranule).value_or(UINT64_MAX);
    bytes = add_saturating(bytes, multiply(uint64_t(d.live_contexts), s.cfg.context_bytes).value_or(UINT64_MAX));
    if (d.live_contexts > 0) bytes = add_saturating(bytes, s.cfg.hidden_bytes);
    return bytes;
}

bool fits(int device, uint64_t granules) {
    uint64_t used = device_used_bytes(device);
    const Config &cfg = state().cfg;
    uint64_t cap = cfg.capacity > cfg.other_bytes ? cfg.capacity - cfg.other_bytes : 0;  // another process's share
    return used <= cap && granules <= (cap - used) / kGranule;
}

void context_went_live(Ctx *ctx) {
    ctx->alive = true;
    ++state().devices[ctx->device]->live_contexts;
}

void context_died(Ctx *ctx) {
    // As cuCtxDestroy documents: the context's cuMemAlloc memory goes with it;
    // pools and cuMemCreate memory do not.
    State &s = state();
    ctx->alive = false;
    Device &d = *s.devices[ctx->device];
    --d.live_contexts;
    d.heap.release_all_of(ctx);
    for (auto it = s.arrays.begin(); it != s.arrays.end();)
        it = it->second.ctx == ctx ? s.arrays.erase(it) : std::next(it);
    for (auto it = s.streams.begin(); it != s.streams.end();)
        it = it->second->ctx == ctx ? s.streams.erase(it) : std::next(it);
}

Pool &pool_for_device(int device) {
    State &s = state();
    Device &d = *s.devices[device];
    if (d.current_pool) return *d.current_pool;
    if (!d.default_pool) {
        auto pool = std::make_unique<Pool>(device);
        d.default_pool = pool.get();
        s.pools.emplace(pool.get(), std::move(pool));
    }
    return *d.default_pool;
}

Pool *find_pool(CUmemoryPool handle) {
    auto &pools = state().pools;
    auto it = pools.find(reinterpret_cast<const Pool *>(handle));
    if (it == pools.end() || it->second->destroyed) return nullptr;
    return it->second.get();
}

void trim_pools_on_sync(int device) {
    State &s = state();
    for (auto &[key, pool] : s.pools)
        if (pool->device == device && pool->reserved_bytes() > pool->release_threshold)
            pool->trim_to(pool->release_threshold, s.devices[device]->async_space);
}

void maybe_erase_destroyed(Pool *pool) {
    if (!pool->destroyed) return;
    State &s = state();
    pool->trim_to(0, s.devices[pool->device]->async_space);
    if (pool->empty()) s.pools.erase(pool);
}

}  // namespace sim
