// The tracker's state, shared by the files of track/ that each do one of its jobs (tracker.h
// is what the other stages see): tracker.cpp records a hooked call's event, event_stacks.cpp
// its stacks, snapshots.cpp the snapshots, records.cpp the records that are not events
// (marks, NVTX memory, the End record, the program's own), blocks.cpp a caching
// allocator's blocks, queries.cpp answers the C API; tracker_state.cpp makes the state,
// hands its pending records to the writer thread and carries it across a fork.
//
// One State, under one mutex, private to track/: nothing outside reads or changes it, and
// nothing inside does without `mu`. The accounting rules themselves are in rules/ledger.h
// (tracker_ledger.h).
#pragma once

#include <time.h>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <cumemtrace/trace_format.h>

#include "base/config.h"
#include "stacks/python_tree.h"
#include "stacks/stack_pair_cache.h"
#include "stacks/stack_tree.h"
#include "track/pending_buffer.h"
#include "track/tracker.h"
#include "track/tracker_ledger.h"

namespace cumemtrace::interpose {

// ---- for the writer thread (writer_thread.cpp) and the snapshots ----

// Moves the encoded records waiting to be written, in chunks, into `chunks` (empty).
void take_pending(std::vector<std::string>& chunks);
// Returns written chunks for reuse.
void give_back_pending(std::vector<std::string>& chunks);
// From a fatal signal's handler (fatal_signal.cpp): if the tracker's lock comes free
// within about a second (try-lock and nanosleep only: the crashing thread may hold it),
// passes each pending chunk to `write` in order (with `arg`), leaving them in place. False
// otherwise.
bool visit_pending_in_signal_handler(void (*write)(std::string_view chunk, void* arg), void* arg);

// What a snapshot learns from outside the tracker (NVML, the driver), per device.
struct DeviceSample {
  NvmlFigures nvml;
  uint64_t pool_reserved = format::kUnknown64;
  GraphMemFigures graph;  // the graph memory pool (1.9)
};
struct DeviceSamples {
  std::map<int32_t, DeviceSample> devices;  // by device ordinal
  bool capture_open = false;                // the driver was not asked (probe/stream_capture.h): pool figures unknown
  bool nvml_missed = false;                 // NVML was asked but did not answer in time (sampler.h)
  uint64_t seq_before = 0;                  // events seen by the tracker before the readings began
};

// Takes a snapshot of one moment: samples NVML (and the driver), then appends the
// tracker's figures if no event came in between (kMomentSame); else samples again, at
// most three times, and the last one goes in without kMomentSame. Call outside the lock.
// NVML is read on the reader thread (sampler.h): when it does not answer in time the
// snapshot goes in at once without it (kMomentReadingMissed), and the reading, if it
// comes, is appended then as a kLateReading snapshot of its own moment.
void take_snapshot(format::SnapshotReason reason);

// Logs (info) how many snapshots were taken and what their NVML and driver readings cost.
void log_sampling_cost();

// Failed allocations recorded so far (restores of failed frees not counted).
uint64_t failed_allocations();

// Whether some device's tracked peak rose since the last snapshot.
bool peak_rose_since_snapshot();

// Appends the EndRecord; from then on nothing more is appended (nor counted).
void append_end();
// Appends an EndRecord that says the process exec'd into `target` (EndReason::kExec).
void append_exec_end(std::string_view target);

// Tracing stops for good (after the final flush at exit, or when no trace can be written).
void stop_tracing();

inline uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

struct State : TrackerLedger {
  State() : TrackerLedger(config().granule_bytes) {}
  std::mutex mu;
  PendingBuffer pending;  // encoded records not yet taken by the writer
  std::string new_nodes;  // StackNodeRecords of the event being recorded
  uint64_t events_written = 0, events_dropped = 0;
  uint32_t block_sources_on = 0;  // format::BlockSourceFlags an `on` record was written for
  // Marks and NvtxMem records lost the same way: not events (seq() leaves them out, so that
  // snapshots still line up with the events), but the trace's "dropped" figures include them
  // (dropped()), so that a report says its figures lack something.
  uint64_t records_dropped = 0;
  uint64_t dropped() const { return events_dropped + records_dropped; }
  // The count each kind's last Bounded record said, by format::BoundedWhat (records.cpp
  // counts what the tracer did not keep past each bound: track_bounded).
  static constexpr size_t kBoundedKinds = 7;  // BoundedWhat's values are 1-6
  uint64_t bounded_written[kBoundedKinds] = {};
  // The EndRecord is in `pending`: nothing more is appended nor counted, so that its count
  // is what the file holds whatever threads do during exit (threads allocating while the
  // process exited put 1-15 events after it, and the report called the trace incomplete).
  bool ended = false;
  StackTree stacks;
  PyStackTree python_stacks;
  // Each thread's previous stacks (stack_memo.h), by thread id modulo their number: two
  // threads on one memo cost lookups, never a wrong stack. In the State, not per thread,
  // so that they go with the trees they name nodes of (a fork child makes new ones) and
  // are only touched under `mu`.
  struct Memos {
    StackTree::Memo native;
    PyStackTree::Memo python;
    StackPairCache seen;  // the thread's recent stacks whole (stack_pair_cache.h)
  };
  static constexpr uint32_t kMemos = 64;
  std::vector<Memos> memos = std::vector<Memos>(kMemos);
  uint64_t stack_checks_failed = 0;
  std::map<int32_t, std::string> device_uuids;             // as NVML spells them
  std::map<int32_t, uint64_t> default_pools;               // device -> its default memory pool
  uint64_t peak_rises_at_snapshot = 0;                     // peak_rises as of the last snapshot
  std::unordered_map<uint64_t, int32_t> created_contexts;  // cuCtxCreate's live contexts -> device

  uint64_t seq() const { return events_written + events_dropped; }

  // False (nothing appended) when `same_moment_only` and events came after the samples'
  // readings began (snapshots.cpp).
  bool append_snapshot(format::SnapshotReason reason, const DeviceSamples& samples, bool same_moment_only);
};

// The state, made on first use, which starts the trace (its writer thread).
State& state();
// The state if the trace has started, else null: for what never starts a trace of its own.
State* started_state();
// A record made before the trace started (a mark, a range's push or pop, a tag: the program
// may make them before its first CUDA call): `put` appends it, stamped in its call, to those
// kept, up to kBeforeStartBytes in all, for the state to put first when it is made. 1 kept,
// -1 past the bound (counted with the records dropped), 0 the trace has started (`put` not
// called: append it to the state).
constexpr size_t kBeforeStartBytes = size_t(1) << 20;
int append_before_start(const std::function<void(std::string&)>& put);

// Appends a Bounded record for each kind whose count changed since its last one (under
// `s.mu`): at each flush and before the End record, so the last one holds the count.
void put_bounded_counts(State& s);

// reset_peak() was called: a state made from now on keeps the peak's sites.
void ask_for_peak_sites();

// What each job's file starts afresh in a forked child (tracker_after_fork_child).
void events_after_fork_child();     // tracker.cpp
void blocks_after_fork_child();     // blocks.cpp
void snapshots_after_fork_child();  // snapshots.cpp
void bounded_after_fork_child();    // records.cpp: the child's trace counts its own

}  // namespace cumemtrace::interpose
