// Everything the simulated driver knows, behind one process-wide mutex.
//
// Entry points lock, check, and call into the models (Heap, Pool, Vmm...);
// nothing in here calls an exported cu* function, so the preload library under
// test sees each application call exactly once.
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "capture.h"
#include "granule_space.h"
#include "graph.h"
#include "heap.h"
#include "pool.h"
#include "sim_config.h"

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace sim {

struct Ctx {
    int device;
    bool primary;
    bool alive;
    unsigned refcount;  // primary contexts: retains minus releases
    unsigned flags;
};

struct Stream {
    Ctx *ctx;
};

struct Device {
    explicit Device(int ordinal);
    int ordinal;
    Heap heap;                 // cuMemAlloc and friends
    GranuleSpace async_space;  // addresses of every pool on this device
    GranuleSpace vmm_space;    // cuMemAddressReserve
    Ctx primary;
    Pool *default_pool = nullptr;  // created on first use
    Pool *current_pool = nullptr;  // cuDeviceSetMemPool; default when null
    uint64_t vmm_granules = 0;     // physical memory held by cuMemCreate handles
    int live_contexts = 0;
};

struct VmmHandle {
    CUmemAllocationProp prop;
    uint64_t size;
    int device;
    int refs;               // cuMemCreate + cuMemRetainAllocationHandle - cuMemRelease
    int maps;               // live cuMemMap ranges backed by it
    bool imported = false;  // cuMemImportFromShareableHandle: the exporter's memory, none taken here
};

struct Reservation {
    uint64_t size;
    int device;  // whose VMM region the range came from
};

struct Mapping {
    uint64_t size;
    uint64_t handle;
    uint64_t offset;
};

struct HostBlock {
    uint64_t size;
    bool managed;  // cuMemAllocManaged (else pinned: cuMemAllocHost/cuMemHostAlloc)
    int device;
    Ctx *ctx;
};

// A CUDA array (api_array.cpp): its texels live in a block of the device heap.
struct Array {
    uint64_t heap_addr;
    Ctx *ctx;        // goes with its context, like cuMemAlloc's memory
    bool mipmapped;  // made by cuMipmappedArrayCreate (destroyed only by its own call)
};

// A cuIpcOpenMemHandle mapping (api_ipc.cpp): address space of the VMM region, no memory.
struct Import {
    uint64_t size;      // the exported allocation's bytes, as the handle says
    uint64_t reserved;  // size rounded up to granules, given back at close
    int device;
};

struct State {
    Config cfg;
    bool initialized = false;
    bool forked_child = false;  // parent had initialized: CUDA is unusable here
    std::vector<std::unique_ptr<Device>> devices;
    std::vector<std::unique_ptr<Ctx>> created_contexts;  // cuCtxCreate; kept so stale handles stay checkable
    std::set<const Ctx *> all_contexts;
    std::map<const Stream *, std::unique_ptr<Stream>> streams;
    std::map<const Pool *, std::unique_ptr<Pool>> pools;
    std::map<uint64_t, VmmHandle> handles;
    uint64_t next_handle = 0x5100000001ull;
    std::map<uint64_t, Reservation> reservations;  // start -> range
    std::map<uint64_t, Mapping> mappings;          // start -> range
    std::map<uint64_t, HostBlock> host;            // pinned and managed host memory
    std::map<uint64_t, uint64_t> registered;       // cuMemHostRegister: start -> bytes (the program's memory)
    CaptureState capture;                          // stream captures in progress
    std::map<uint64_t, Array> arrays;              // CUarray / CUmipmappedArray handle -> array
    uint64_t next_array = 0x5a00000001ull;         // handles are counters, never dereferenced
    std::map<uint64_t, Import> imports;            // cuIpcOpenMemHandle: start -> mapping
    GraphState graph;                              // graphs, executables, graph memory pools
};

// Address regions, per device ordinal d (docs/simulated-driver.md).
constexpr uint64_t kDeviceStride = 1ull << 40;
constexpr uint64_t kHeapBase = 0x7f0000000000ull, kHeapLength = 0x4000000000ull;
constexpr uint64_t kAsyncBase = 0x7f4000000000ull, kAsyncLength = 0x4000000000ull;
constexpr uint64_t kVmmBase = 0x7f8000000000ull, kVmmLength = 0x8000000000ull;

std::mutex &driver_mutex();
// The state; caller holds driver_mutex(). Created (reading the environment) on first use.
State &state();
// Test-only: forget everything and read the environment again.
void reset_state();

// The calling thread's context stack (cuCtxPush/Pop/SetCurrent).
//
// Trivially destructible on purpose: a thread_local with a destructor (it was
// a std::vector) is destroyed when the thread exits, and for the main thread
// that is before atexit handlers run, which may still call the driver (real
// drivers allow it). So a fixed array: nothing to destroy, valid to the end.
class CtxStack {
   public:
    static constexpr int kCapacity = 64;  // deeper pushes: CUDA_ERROR_OUT_OF_MEMORY
    bool empty() const { return count_ == 0; }
    bool full() const { return count_ == kCapacity; }
    Ctx *top() const { return ctx_[count_ - 1]; }   // not empty
    void set_top(Ctx *c) { ctx_[count_ - 1] = c; }  // not empty
    void push(Ctx *c) { ctx_[count_++] = c; }       // not full
    void pop() { --count_; }                        // not empty
    void clear() { count_ = 0; }

   private:
    Ctx *ctx_[kCapacity];
    int count_;
};

// Current context of the calling thread, or null (none, or destroyed).
Ctx *current_ctx();
CtxStack &ctx_stack();

// Common preamble of entry points: initialized, not a forked child, not the driver's
// callback thread (api_callback.cpp: a host function may not call CUDA).
CUresult check_init();
bool on_callback_thread();
// check_init, then a live current context.
CUresult require_ctx(Ctx **out);
bool valid_ctx(const Ctx *ctx);
bool valid_device(int ordinal);

uint64_t footprint_granules(int device);
uint64_t device_used_bytes(int device);
bool fits(int device, uint64_t granules);

void context_went_live(Ctx *ctx);
void context_died(Ctx *ctx);

Pool &pool_for_device(int device);  // the current pool, creating the default
Pool *find_pool(CUmemoryPool handle);
void trim_pools_on_sync(int device);
void maybe_erase_destroyed(Pool *pool);

inline CUcontext to_handle(Ctx *c) { return reinterpret_cast<CUcontext>(c); }
inline Ctx *from_handle(CUcontext c) { return reinterpret_cast<Ctx *>(c); }

}  // namespace sim

#define SIM_LOCKED std::lock_guard<std::mutex> sim_lock_(::sim::driver_mutex())
