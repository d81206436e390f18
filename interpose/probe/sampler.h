// NVML is read on a thread of the tracer's own, the reader thread, never on a program's
// thread: NVML asks the kernel driver, which may take seconds or never answer (a GPU in a
// bad state, a busy driver), and no CUDA call of the program may wait for that (issue
// 29.7: with NVML answering in 2 s, each cudaMalloc that crossed the sampled-peak margin
// took 2 s). Whoever needs a reading (a sampled peak or a failed allocation in the
// allocating thread, a context creation, the writer thread's snapshots) hands it over and
// waits for it at most CUMEMTRACE_NVML_WAIT_MS (at least 1 s while NVML is being loaded:
// its dlopen and nvmlInit come once). Once a reading took longer than that, nobody waits for
// NVML until a reading comes in time again: a hung NVML costs the job one wait in all.
// A reading that comes after its requester stopped waiting is handed to the requester's
// `late` function on the reader thread (the tracker appends it with its own moment).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "probe/nvml.h"

namespace cumemtrace::interpose {

struct NvmlReading {
  std::map<int32_t, std::string> uuids;    // what to read: device ordinal -> NVML's UUID
  std::map<int32_t, NvmlFigures> figures;  // what NVML said, by device ordinal
  uint64_t seq_before = 0;                 // the tracker's events before it was handed over
};
using LateReading = void (*)(const NvmlReading&);

struct SamplerItem;

// A reading, handed to the reader thread when the ticket is made (the requester may do
// other work, such as its driver queries, while NVML is read).
class NvmlTicket {
 public:
  NvmlTicket(std::shared_ptr<NvmlReading> reading, LateReading late);
  // True: the reading came in time, its figures are filled. False: it did not (or was
  // never taken: the reader thread is stuck with earlier ones); the reading is then no
  // longer the requester's to read.
  bool wait();

 private:
  std::shared_ptr<SamplerItem> item_;
};

// One device's figures, or all unknown when NVML did not answer in time.
NvmlFigures nvml_query_in_time(const std::string& uuid);

// In a forked child: the reader thread is not there (it may have been stuck in NVML);
// a fresh one starts at the child's first reading.
// Around fork (lifecycle.cpp): no reading starts, and the one in progress is waited for
// at most 50 ms, so the reader thread is not inside malloc when the child is made.
void sampler_prepare_fork();
void sampler_after_fork_parent();
void sampler_after_fork_child();

}  // namespace cumemtrace::interpose
