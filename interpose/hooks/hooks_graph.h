// Bodies of the CUDA graph hooks: graph memory nodes added directly, launches, executable
// destruction and trims of the device's graph memory pool (trace format 1.9).
//
// A graph's allocation nodes take device memory from the device's graph memory pool when
// a graph first needs it at launch, and the pool keeps it, after the executable and the
// graph are gone, until cuDeviceGraphMemTrim (measured on an H200: docs/validation.md
// section 11). No allocation event says so: the pool's reserve is read from the driver after
// each launch, destroy and trim (event `size`) and in every snapshot — outside stream
// captures only (probe/stream_capture.h); during one it is kUnknown64.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "track/call.h"
#include "probe/driver_api.h"
#include "hooks/hooks_driver.h"

namespace cumemtrace::interpose {

// A graph memory node added by cuGraphAddMemAllocNode: like an allocation captured from a
// stream (a virtual address, no memory now), with the graph as handle. Only a node that
// was added is recorded: a refused one is no out-of-memory.
inline EventDraft node_alloc(int32_t result, uint64_t dptr, uint64_t bytes, uint64_t graph, int32_t device) {
  return {.op = Op::kAlloc,
          .kind = Kind::kAsyncPool,
          .result = result,
          .address = dptr,
          .size = bytes,
          .handle = graph,
          .device = device,
          .flags = uint32_t(format::kEventCaptured | format::kEventGraphNode)};
}
// A free node: carried out when the graph runs. Recorded after the call (the address is
// not given back now, so no other allocation can take it in between); the tracker puts it
// on its allocation node's device.
inline EventDraft node_free(int32_t result, uint64_t dptr, uint64_t graph) {
  return {.op = Op::kFree,
          .result = result,
          .address = dptr,
          .handle = graph,
          .device = -1,
          .flags = uint32_t(format::kEventCaptured | format::kEventGraphNode)};
}

CUresult on_graph_add_alloc_node(HookId id, auto real, CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                                 size_t count, CUDA_MEM_ALLOC_NODE_PARAMS* params) {
  DriverCall call(id);
  const CUresult r = real(node, graph, deps, count, params);
  if (r == CUDA_SUCCESS && params) {
    const auto& where = params->poolProps.location;
    call.record(node_alloc(r, params->dptr, params->bytesize, bits(graph),
                           where.type == CU_MEM_LOCATION_TYPE_DEVICE ? where.id : -1));
  }
  return r;
}

CUresult on_graph_add_free_node(HookId id, auto real, CUgraphNode* node, CUgraph graph, const CUgraphNode* deps,
                                size_t count, CUdeviceptr dptr) {
  DriverCall call(id);
  const CUresult r = real(node, graph, deps, count, dptr);
  if (r == CUDA_SUCCESS) call.record(node_free(r, dptr, bits(graph)));
  return r;
}

// The pool events: the graph calls below are put on the thread's current device (a launch
// goes to the stream's device, which is the current one in every program we know of), and
// carry the pool's reserve read right after the call (unknown during a capture).
inline EventDraft pool_event(Op op, int32_t result, uint64_t exec, uint64_t stream = 0, uint32_t flags = 0) {
  const int32_t device = device_of(0);
  return {.op = op,
          .result = result,
          .size = graph_mem_figures(device).reserved_current,
          .stream = stream,
          .handle = exec,
          .device = device,
          .flags = flags};
}
inline EventDraft trim_event(int32_t result, int32_t device) {
  return {
      .op = Op::kGraphMemTrim, .result = result, .size = graph_mem_figures(device).reserved_current, .device = device};
}

CUresult on_graph_launch(HookId id, auto real, CUgraphExec exec, CUstream stream) {
  DriverCall call(id);
  const uint32_t flags = captured(stream);  // a graph launched into a capture: a child graph node
  const CUresult r = real(exec, stream);
  if (call.recording()) call.record(pool_event(Op::kGraphLaunch, r, bits(exec), bits(stream), flags));
  return r;
}

CUresult on_graph_exec_destroy(HookId id, auto real, CUgraphExec exec) {
  DriverCall call(id);
  const CUresult r = real(exec);
  if (call.recording()) call.record(pool_event(Op::kGraphExecDestroy, r, bits(exec)));
  return r;
}

CUresult on_graph_mem_trim(HookId id, auto real, CUdevice dev) {
  DriverCall call(id);
  const CUresult r = real(dev);
  if (call.recording()) call.record(trim_event(r, dev));
  return r;
}

// Runtime names: they only tag (call.h); the fallback records when no driver hook did.
cudaError_t on_cuda_graph_add_alloc_node(HookId id, auto real, cudaGraphNode_t* node, cudaGraph_t graph,
                                         const cudaGraphNode_t* deps, size_t count, cudaMemAllocNodeParams* params) {
  RuntimeCall call(id);
  const cudaError_t r = real(node, graph, deps, count, params);
  if (r == cudaSuccess && params) {
    const auto& where = params->poolProps.location;
    call.fallback(node_alloc(r, bits(params->dptr), params->bytesize, bits(graph),
                             where.type == cudaMemLocationTypeDevice ? where.id : -1));
  }
  return r;
}

cudaError_t on_cuda_graph_add_free_node(HookId id, auto real, cudaGraphNode_t* node, cudaGraph_t graph,
                                        const cudaGraphNode_t* deps, size_t count, void* dptr) {
  RuntimeCall call(id);
  const cudaError_t r = real(node, graph, deps, count, dptr);
  if (r == cudaSuccess) call.fallback(node_free(r, bits(dptr), bits(graph)));
  return r;
}

// The driver hook beneath usually records; the queries are made only for a fallback.
cudaError_t on_cuda_graph_launch(HookId id, auto real, cudaGraphExec_t exec, cudaStream_t stream) {
  RuntimeCall call(id);
  const uint32_t flags = captured(stream);
  const cudaError_t r = real(exec, stream);
  if (call.needs_fallback()) call.fallback(pool_event(Op::kGraphLaunch, r, bits(exec), bits(stream), flags));
  return r;
}

cudaError_t on_cuda_graph_exec_destroy(HookId id, auto real, cudaGraphExec_t exec) {
  RuntimeCall call(id);
  const cudaError_t r = real(exec);
  if (call.needs_fallback()) call.fallback(pool_event(Op::kGraphExecDestroy, r, bits(exec)));
  return r;
}

cudaError_t on_cuda_graph_mem_trim(HookId id, auto real, int dev) {
  RuntimeCall call(id);
  const cudaError_t r = real(dev);
  if (call.needs_fallback()) call.fallback(trim_event(r, dev));
  return r;
}

}  // namespace cumemtrace::interpose
