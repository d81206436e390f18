// Graphs and the graph memory pool (graph.h has the model).
#include <algorithm>
#include <optional>

#include "driver_state.h"
#include "graph.h"
#include "sim_export.h"

namespace sim {
namespace {

uint64_t granules_of(uint64_t size) { return (size + kGranule - 1) / kGranule; }

// Peak bytes the graph's allocation nodes hold, walked in node order, and what is still
// held at the end (the escaped allocations).
struct Footprint {
    uint64_t peak = 0, escaped = 0;
};
Footprint footprint(const std::vector<GraphOp> &ops) {
    std::map<uint64_t, uint64_t> live;
    Footprint f;
    for (const GraphOp &op : ops) {
        if (op.alloc) {
            live[op.address] = granules_of(op.size) * kGranule;
            f.escaped += live[op.address];
            f.peak = std::max(f.peak, f.escaped);
        } else if (auto it = live.find(op.address); it != live.end()) {
            f.escaped -= it->second;
            live.erase(it);
        }
    }
    return f;
}

// The allocation nodes not freed inside the graph: address -> granule-rounded bytes.
std::map<uint64_t, uint64_t> escaping(const std::vector<GraphOp> &ops) {
    std::map<uint64_t, uint64_t> live;
    for (const GraphOp &op : ops) {
        if (op.alloc) live[op.address] = granules_of(op.size) * kGranule;
        else live.erase(op.address);
    }
    return live;
}

Graph *find_graph(CUgraph g) {
    auto &all = graphs().graphs;
    auto it = all.find(reinterpret_cast<const Graph *>(g));
    return it == all.end() ? nullptr : it->second.get();
}

GraphExec *find_exec(CUgraphExec e) {
    auto &all = graphs().execs;
    auto it = all.find(reinterpret_cast<const GraphExec *>(e));
    return it == all.end() ? nullptr : it->second.get();
}

// Node handles nobody dereferences: the sim keeps nodes only as GraphOps.
CUgraphNode node_token() {
    static char token;
    return reinterpret_cast<CUgraphNode>(&token);
}

// Launched into a capturing stream, a graph becomes a child graph of the capture: its
// memory nodes join the capture's, and that launch is capture-safe (CUDA allows it).
CUresult launch(CUgraphExec e, CUstream s) {
    SIM_LOCKED;
    Capture *cap = capture_of(s);
    std::optional<CaptureSafeCall> safe;
    if (cap) safe.emplace();
    if (CUresult r = check_init()) return r;
    GraphExec *exec = find_exec(e);
    if (!exec) return CUDA_ERROR_INVALID_VALUE;
    if (cap) {
        cap->ops.insert(cap->ops.end(), exec->ops.begin(), exec->ops.end());
        return CUDA_SUCCESS;
    }
    GraphState &g = graphs();
    const auto escapes = escaping(exec->ops);
    for (const auto &[address, bytes] : escapes)
        if (g.escaped.count(address)) return CUDA_ERROR_INVALID_VALUE;  // the last launch's are not freed yet
    const Footprint f = footprint(exec->ops);
    GraphMemPool &pool = g.pools[exec->device];
    const uint64_t need = pool.used + f.peak;
    if (need > pool.reserved) {
        if (!fits(exec->device, (need - pool.reserved) / kGranule)) return CUDA_ERROR_OUT_OF_MEMORY;
        pool.reserved = need;
    }
    pool.used_high = std::max(pool.used_high, need);
    pool.reserved_high = std::max(pool.reserved_high, pool.reserved);
    pool.used += f.escaped;
    for (const auto &[address, bytes] : escapes) g.escaped[address] = {exec->device, bytes};
    return CUDA_SUCCESS;
}

}  // namespace

GraphState &graphs() { return state().graph; }

CUgraph new_graph(int device, std::vector<GraphOp> ops) {
    auto graph = std::make_unique<Graph>();
    graph->device = device;
    graph->ops = std::move(ops);
    const Graph *key = graph.get();
    graphs().graphs[key] = std::move(graph);
    return reinterpret_cast<CUgraph>(const_cast<Graph *>(key));
}

uint64_t graph_pool_granules(int device) {
    const auto &pools = state().graph.pools;
    auto it = pools.find(device);
    return it == pools.end() ? 0 : it->second.reserved / kGranule;
}

bool graph_free_escaped(uint64_t address) {
    GraphState &g = graphs();
    auto it = g.escaped.find(address);
    if (it == g.escaped.end()) return false;
    g.pools[it->second.device].used -= it->second.bytes;
    g.escaped.erase(it);
    return true;
}

}  // namespace sim

using namespace sim;

SIM_API CUresult cuGraphCreate(CUgraph *graph, unsigned int flags) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!graph || flags) return CUDA_ERROR_INVALID_VALUE;
    Ctx *ctx = current_ctx();
    *graph = new_graph(ctx ? ctx->device : 0, {});
    return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphDestroy(CUgraph graph) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!find_graph(graph)) return CUDA_ERROR_INVALID_VALUE;
    graphs().graphs.erase(reinterpret_cast<const Graph *>(graph));
    return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphAddMemAllocNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *, size_t,
                                        CUDA_MEM_ALLOC_NODE_PARAMS *params) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    Graph *g = find_graph(graph);
    if (!node || !g || !params || params->bytesize == 0 ||
        params->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE || !valid_device(params->poolProps.location.id))
        return CUDA_ERROR_INVALID_VALUE;
    if (g->ops.empty()) g->device = params->poolProps.location.id;
    params->dptr = graph_alloc(params->bytesize);
    g->ops.push_back({true, params->dptr, params->bytesize});
    *node = node_token();
    return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphAddMemFreeNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *, size_t,
                                       CUdeviceptr dptr) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    Graph *g = find_graph(graph);
    if (!node || !g || !is_graph_address(dptr)) return CUDA_ERROR_INVALID_VALUE;
    g->ops.push_back({false, dptr, 0});
    *node = node_token();
    return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    Graph *g = find_graph(graph);
    if (!exec || !g) return CUDA_ERROR_INVALID_VALUE;
    auto e = std::make_unique<GraphExec>();
    e->device = g->device;
    e->ops = g->ops;
    const GraphExec *key = e.get();
    graphs().execs[key] = std::move(e);
    *exec = reinterpret_cast<CUgraphExec>(const_cast<GraphExec *>(key));
    return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphLaunch(CUgraphExec exec, CUstream s) { return launch(exec, s); }
SIM_API CUresult cuGraphLaunch_ptsz(CUgraphExec exec, CUstream s) { return launch(exec, s); }

// The reserve stays: what the graph's launches took belongs to the device's pool.
SIM_API CUresult cuGraphExecDestroy(CUgraphExec exec) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!find_exec(exec)) return CUDA_ERROR_INVALID_VALUE;
    graphs().execs.erase(reinterpret_cast<const GraphExec *>(exec));
    return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGraphMemTrim(CUdevice device) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    GraphMemPool &pool = graphs().pools[device];
    pool.reserved = pool.used;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!valid_device(device)) return CUDA_ERROR_INVALID_DEVICE;
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    const GraphMemPool &pool = graphs().pools[device];
    cuuint64_t v;
    switch (attr) {
        case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT: v = pool.used; break;
        case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH: v = pool.used_high; break;
        case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: v = pool.reserved; break;
        case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: v = pool.reserved_high; break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    *static_cast<cuuint64_t *>(value) = v;
    return CUDA_SUCCESS;
}
