// The live picture of the process's CUDA memory, updated as events arrive, and the
// encoded records waiting for the writer thread (writer_thread.h).
//
// One mutex guards it. A hook does everything slow first (unwinding, driver queries)
// and holds the mutex only to update maps and append bytes: no disk, no loader lock,
// no driver call, no allocation proportional to the live set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <cumemtrace/trace_format.h>

#include "track/call.h"
#include "probe/driver_api.h"
#include "probe/nvml.h"

namespace cumemtrace::interpose {

// True while events should be recorded (not disabled, not past exit, trace writable).
bool tracing_enabled();

// Records one event. `api` is the HookId the program called; flags are EventFlags.
// Returns the event as recorded (device, kind and size completed by the tracker).
format::EventRecord track(const EventDraft& e, uint16_t api, uint32_t flags);

// A context's teardown took its memory: records a kFree flagged kEventTeardown (plus
// `flags`) for each live allocation of the kinds a context owns (device, pitch, array)
// made in `context` (a context from cuCtxCreate), or, with `context` 0, in `device`'s
// primary context. Call after the teardown succeeded. Another thread that allocates on
// the device while it is torn down (which CUDA forbids) may see its allocation dropped.
void track_teardown(uint16_t api, int32_t device, uint64_t context, uint32_t flags);
// A cuCtxCreate gave `context` on `device`: allocations made while it is current belong to it.
void note_created_context(uint64_t context, int32_t device);

// The bytes of a name (mark, range, tag, heap, region) the trace keeps; the rest is cut
// (docs/cli.md, "What the tracer bounds"). A wide name is cut before the character that
// would pass it, so that it stays valid UTF-8 (nvtx_shared.h: utf8_of).
inline constexpr size_t kMaxNameBytes = 4096;

// Records a mark (a named moment: iterations are delimited by marks of one name). Never
// calls CUDA; safe from any thread, also during a stream capture.
// Returns whether it was recorded (not before the first CUDA event: there is no trace yet).
// kNvtxPop, kNvtxEnd and kTagPop are written as RangeEnd records (the range's name): an iteration's end.
bool track_mark(std::string_view name, format::MarkSource source);

// One thing of kind `what` was not kept, `cap` being kept at once (format::BoundedWhat): the
// trace says how many (Bounded records), so no report calls what it cut whole. Never calls
// CUDA; any thread, during a capture too; counted before the trace starts as well (a string
// registered before the first CUDA call), and afresh in a forked child.
void track_bounded(format::BoundedWhat what, uint32_t cap);

// What a pool declared through NVTX's memory extension (api/nvtx_mem.cpp): one
// NvtxMemRecord, its time, thread and stacks left to track_nvtx_mem.
struct NvtxMemDraft {
  format::NvtxMemOp op{};
  uint64_t heap = 0, address = 0, size = 0;  // NvtxMemRecord's fields; size in bytes
  uint8_t usage = 0;
  std::string_view name;
};
// Records `n` drafts in order, as one call's (a batch of regions). With `with_stack`, each
// carries the calling thread's stacks, walked once for them all. Never calls CUDA; safe from
// any thread, during a capture too. False when nothing was recorded (no trace yet, tracing
// off, the buffer full).
bool track_nvtx_mem(const NvtxMemDraft* drafts, size_t n, bool with_stack);

// One action a caching allocator reported inside the device memory it holds
// (hooks_allocator.h): a BlockEventRecord's fields, its time, thread and stacks left to
// track_block. Sizes in bytes; kUnknown64 where the allocator did not say.
struct BlockDraft {
  format::BlockOp op{};
  uint64_t address = 0, size = 0;
  uint64_t requested = format::kUnknown64;
  uint64_t allocated = format::kUnknown64, reserved = format::kUnknown64;
  uint64_t stream = format::kUnknown64;
  uint64_t pool[2] = {format::kUnknown64, format::kUnknown64};
  int32_t device = -1;
  uint16_t flags = 0;  // format::BlockEventFlags
};
// Who reports the blocks: what the BlockSourceRecord that turns them on says.
struct BlockSourceFacts {
  format::BlockAllocator allocator{};
  std::string_view version, settings;
};
// Records `d` (an allocation with the calling thread's stacks). The first record of each
// source (usage reports, trace entries: d.flags) is preceded by a BlockSource `on` record
// of it. The runtime checks of what the allocator tells (docs/trace-format.md,
// BlockSource): every allocated block must lie in device memory the tracer saw the driver
// give, else block events turn off for the rest of the process; a segment the allocator
// took must be an allocation the driver gave, address and size, and a mapping it made must
// lie in mappings the driver made, else its trace entries turn off. Each turn-off writes a
// BlockSource `off` record saying why; the rest of tracing goes on. Never calls CUDA or
// Python; never waits for the writer.
void track_block(const BlockDraft& d, const BlockSourceFacts& source);
// The allocator's trace entries will not be read (an unknown layout, or a check failed):
// a BlockSource `off` record of them with `reason`, once, if a trace has started.
void refuse_block_trace_entries(const BlockSourceFacts& source, std::string_view reason);
// Whether trace entries were turned off (then callers stop merging them into drafts).
bool block_trace_entries_off();

// ---- for the C API's live figures (api.h: cumemtrace_stats and its kin) ----
struct DeviceStats {
  int32_t device = -1;
  uint64_t live_bytes = 0, peak = 0, peak_since_reset = 0;
  uint64_t live_since_reset_bytes = 0, live_since_reset_count = 0;
};
struct LiveSite {
  uint32_t stack = 0;
  uint32_t python_stack = 0;  // 0 unless asked for by Python stack too
  int32_t device = -1;
  uint64_t bytes = 0, count = 0;
};
struct PythonFrameText {
  std::string file, function;
  int32_t line = -1;  // -1 when unknown
};
// False when no trace has started. Devices in ordinal order.
bool device_stats(std::vector<DeviceStats>& out);
// Live allocations holding device memory made since the last reset_peak(), by stack
// (native, and Python too when `by_python`); with `at_peak`, those that were live when each
// device reached its peak since then, freed or not.
bool live_sites(std::vector<LiveSite>& out, bool by_python = false, bool at_peak = false);
// The frames of Python stack `id`, innermost first, at most `max` (none for 0).
std::vector<PythonFrameText> python_frames(uint32_t id, size_t max);
// The return addresses of stack `id`, innermost first; returns how many (0: unknown).
uint32_t stack_frames(uint32_t id, uint64_t* out, uint32_t max);
// Starts a new "since": peak_since_reset = live bytes now; later allocations are new.
bool reset_peak();

// Appends whole encoded records a program gave through the C API (api.h), in event order.
// False (nothing appended) when no trace has started (no CUDA call traced yet), tracing
// is off, or the unwritten records already fill CUMEMTRACE_BUFFER_MB. Never does I/O.
bool append_program_records(std::string_view encoded);

// ---- fork (lifecycle.cpp) ----
void tracker_prepare_fork();
void tracker_after_fork_parent();
void tracker_after_fork_child();

}  // namespace cumemtrace::interpose
