// PyTorch's trace entries: what its CUDA caching allocator tells a trace tracker
// (c10::CachingDeviceAllocator::TraceEntry, handed to every AllocatorTraceTracker that
// attachAllocatorTraceTracker attached) about each block it hands out and frees, each free
// that waits on other streams, each segment it takes, maps, unmaps or gives back, and each
// out-of-memory error of its own — with the requested bytes, the stream and the pool.
//
// Why read them beside the usage reports (hooks_allocator.h): the reports give a block's
// size and the allocator's totals, never what the program asked for, its stream, its pool
// (a CUDA graph's or a MemPool's), nor a free still waiting on other streams' events.
//
// How, without changing the program (docs/trace-format.md, BlockSource): at the first block
// PyTorch reports, the tracker is attached through the allocator object libc10_cuda.so
// exports (c10::cuda::CUDACachingAllocator::allocator), when its class is PyTorch's native
// caching allocator (by its run-time type's name) and its version is one whose layout is
// known here (the table in torch_trace_entries.cpp). Every entry is then checked against the
// driver's events (track_block); on an unknown version or a failed check the trace says
// why in a BlockSource `off` record, and the usage reports go on.
//
// Deadlocks: the tracker runs under a device's allocator lock and only takes the tracer's
// own lock, as the usage reports do. The attach runs inside the first usage report (that
// device's lock is recursive) and takes the other devices' locks in turn; a thread holding
// one of those waits on nothing of ours but the tracer's lock, which the attach does not
// hold, and a second thread reaching a first report meanwhile does not wait for the attach.
#pragma once

#include <string_view>

#include "track/tracker.h"

namespace cumemtrace::interpose {

// Once per process: attaches the tracker, or writes why not. `report_fn` is libc10.so's
// reporting function (libc10_cuda.so lies beside it).
void attach_torch_trace_tracker(const void* report_fn, const BlockSourceFacts& source);

// The usage report `d` (an alloc, a free or an oom) is the one the allocator makes right
// after the trace entry of the same action on this thread: that entry's requested bytes,
// stream and pool go into `d`, with kBlockTraceEntry (and kBlockPendingFree for a free
// whose completion had not come). False when this thread has no such entry.
bool merge_torch_trace_entry(BlockDraft& d);

}  // namespace cumemtrace::interpose
