// CUDA graphs, only as far as their memory goes: graphs made by stream capture or by
// cuGraphAddMemAllocNode/FreeNode, their executables, and each device's graph memory pool.
//
// The model (the real driver's policy is its own; examples/h200/proofs/graph_memory.sh measures it):
//  - A graph's footprint is the peak, over its memory nodes in the order they were added,
//    of the bytes its allocation nodes hold (each rounded up to 2 MiB granules). Nodes freed
//    inside the graph so reuse one another's memory: alloc/free three times 1 GiB needs
//    1 GiB; three allocations that escape (not freed in the graph) need 3 GiB.
//  - Launching a graph makes the device's pool reserve at least `used + footprint`, where
//    `used` is what escaped allocations of earlier launches still hold; the reserve comes
//    out of the device's memory (OUT_OF_MEMORY when it does not fit) and stays after the
//    launch, after cuGraphExecDestroy and cuGraphDestroy, until cuDeviceGraphMemTrim.
//  - After the launch the graph's escaped allocations are live (`used`) until the program
//    frees them with cuMemFreeAsync on an ordinary stream; their memory then goes back to
//    the pool, still reserved. A graph whose escaped allocations are still live cannot be
//    launched again (CUDA_ERROR_INVALID_VALUE, as cuGraphLaunch documents).
//  - cuDeviceGraphMemTrim gives back what the pool reserves beyond `used`.
//  - Launches are instantaneous here, like all stream work in the sim.
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "capture.h"

namespace sim {

struct Graph {
    int device = 0;
    std::vector<GraphOp> ops;
};

struct GraphExec {
    int device = 0;
    std::vector<GraphOp> ops;  // copied at instantiation: the graph may be destroyed first
};

struct GraphMemPool {  // bytes, as cuDeviceGetGraphMemAttribute reports them
    uint64_t used = 0, reserved = 0, used_high = 0, reserved_high = 0;
};

struct GraphState {
    std::map<const Graph *, std::unique_ptr<Graph>> graphs;
    std::map<const GraphExec *, std::unique_ptr<GraphExec>> execs;
    struct Escaped {
        int device;
        uint64_t bytes;  // granule-rounded
    };
    std::map<uint64_t, Escaped> escaped;  // launched, not yet freed: by address
    std::map<int, GraphMemPool> pools;    // by device ordinal
};

// Every function below: driver_mutex() held.
GraphState &graphs();
// A graph made of the memory nodes `ops` on `device`; the handle cuStreamEndCapture returns.
CUgraph new_graph(int device, std::vector<GraphOp> ops);
// Bytes the graph memory pool of `device` reserves, in whole granules.
uint64_t graph_pool_granules(int device);
// cuMemFreeAsync on an ordinary stream of a launched graph's escaped allocation: true when
// `address` was one (its memory goes back to the pool, still reserved).
bool graph_free_escaped(uint64_t address);

}  // namespace sim
