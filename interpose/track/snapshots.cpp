// Snapshots: the tracker's figures at one moment beside what NVML and the driver say then
// (take_snapshot), and what their readings cost.
#include "track/tracker.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <cumemtrace/record_encode.h>

#include "base/loader_lock.h"
#include "base/log.h"
#include "probe/driver_api.h"
#include "probe/sampler.h"
#include "probe/stream_capture.h"
#include "track/tracker_state.h"

namespace cumemtrace::interpose {

using format::Kind;

bool State::append_snapshot(format::SnapshotReason reason, const DeviceSamples& samples, bool same_moment_only) {
  if (ended) return true;  // a late reading after the EndRecord: not written
  const bool same = seq() == samples.seq_before;
  if (same_moment_only && !same) return false;
  peak_rises_at_snapshot = peak_rises;
  const uint32_t flags = samples.capture_open ? uint32_t(format::kSnapshotCaptureOpen) : 0u;
  const format::SnapshotRecord head{
      now_ns(), uint32_t(reason), uint32_t(devices.size()), uint32_t(sizeof(format::DeviceSnapshot)), flags, dropped()};
  put_record_head<format::RecordType::kSnapshot>(pending, head, devices.size() * sizeof(format::DeviceSnapshot));
  for (const auto& [dev, ds] : devices) {
    format::DeviceSnapshot e{};
    e.device = dev;
    std::copy(ds.live_bytes, ds.live_bytes + format::kSnapshotKinds, e.live_bytes);
    std::copy(ds.live_bytes + format::kSnapshotKinds, std::end(ds.live_bytes), e.live_bytes_more);
    e.live_bytes[int(Kind::kVmmReserve)] = ds.reserved_bytes;  // the ledger keeps them apart
    e.live_count = ds.snapshot_live_count();
    e.device_bytes = ds.device_bytes;
    e.peak_device_bytes = ds.peak;
    e.peak_time_ns = ds.peak_time;
    const FragmentationFigures f = ds.frag.figures();
    e.arena_bytes = f.arena_bytes;
    e.arena_count = f.arena_count;
    e.gap_bytes = f.gap_bytes;
    e.largest_gap = f.largest_gap;
    const auto n = samples.devices.find(dev);
    const DeviceSample sample = n != samples.devices.end() ? n->second : DeviceSample{};
    e.nvml_process_used = sample.nvml.process_used;
    e.nvml_device_free = sample.nvml.device_free;
    e.nvml_device_total = sample.nvml.device_total;
    e.pool_reserved_bytes = sample.pool_reserved;
    e.graph_used_current = sample.graph.used_current;
    e.graph_reserved_current = sample.graph.reserved_current;
    e.graph_used_high = sample.graph.used_high;
    e.graph_reserved_high = sample.graph.reserved_high;
    e.nvml_read_ns = sample.nvml.read_ns;
    e.event_seq = seq();
    e.moment = same && sample.nvml.process_used != format::kUnknown64 ? uint32_t(format::kMomentSame) : 0u;
    if (samples.nvml_missed && device_uuids.count(dev)) e.moment |= format::kMomentReadingMissed;
    put_bytes(pending, &e, sizeof e);
  }
  for (const auto& [dev, sample] : samples.devices) {
    if (!sample.nvml.processes_known || !devices.count(dev)) continue;
    const auto& procs = sample.nvml.processes;
    const format::GpuProcessesRecord g{sample.nvml.read_ns, dev, uint32_t(procs.size())};
    put_record_head<format::RecordType::kGpuProcesses>(pending, g, procs.size() * sizeof(format::GpuProcess));
    if (!procs.empty()) put_bytes(pending, procs.data(), procs.size() * sizeof(format::GpuProcess));
  }
  return true;
}

namespace {

// What the snapshots' readings cost, for the exit log (CUMEMTRACE_LOG=info): one look
// tells whether they could weigh on a job (docs/validation.md section 16: they did not).
struct SamplingCost {
  std::atomic<uint64_t> snapshots{0}, samplings{0}, nvml_ns{0}, nvml_max_ns{0}, driver_ns{0}, driver_max_ns{0};
  static void raise(std::atomic<uint64_t>& max, uint64_t v) {
    for (uint64_t m = max.load(std::memory_order_relaxed); v > m && !max.compare_exchange_weak(m, v);) {}
  }
  void reset() {
    for (auto* a : {&snapshots, &samplings, &nvml_ns, &nvml_max_ns, &driver_ns, &driver_max_ns})
      a->store(0, std::memory_order_relaxed);
  }
  void add(uint64_t nvml, uint64_t driver) {
    samplings.fetch_add(1, std::memory_order_relaxed);
    nvml_ns.fetch_add(nvml, std::memory_order_relaxed);
    driver_ns.fetch_add(driver, std::memory_order_relaxed);
    raise(nvml_max_ns, nvml);
    raise(driver_max_ns, driver);
  }
} g_sampling_cost;

// A reading that came after its snapshot went without it: a snapshot of its own moment.
void append_late_reading(const NvmlReading& r) {
  State* s = started_state();
  if (!s) return;
  DeviceSamples samples;
  samples.seq_before = r.seq_before;
  for (const auto& [dev, figures] : r.figures) samples.devices[dev].nvml = figures;
  std::lock_guard lock(s->mu);
  if (s->ended) return;
  s->append_snapshot(format::SnapshotReason::kLateReading, samples, false);
  g_sampling_cost.snapshots.fetch_add(1, std::memory_order_relaxed);  // one count per snapshot written
  g_sampling_cost.add(0, 0);
}

// NVML (on the reader thread, sampler.h) and the driver (here, meanwhile, and only
// outside captures), outside the tracker's lock.
DeviceSamples sample_devices() {
  State& s = state();
  std::map<int32_t, std::string> uuids;
  std::map<int32_t, uint64_t> pools;
  std::vector<int32_t> ordinals;
  DeviceSamples out;
  {
    std::lock_guard lock(s.mu);
    uuids = s.device_uuids;
    pools = s.default_pools;
    for (const auto& [dev, ds] : s.devices)
      if (dev >= 0) ordinals.push_back(dev);
    out.seq_before = s.seq();
  }
  // NVML is not CUDA: a capture does not see it (checked on the H200, docs/validation.md).
  auto reading = std::make_shared<NvmlReading>();
  reading->uuids = uuids;
  reading->seq_before = out.seq_before;
  NvmlTicket ticket(reading, append_late_reading);
  const uint64_t t0 = now_ns();
  {
    const ForeignCall foreign;  // the driver may use the loader inside (loader_lock.h)
    const OwnCudaCalls own;
    out.capture_open = !own;
    if (own) {
      for (const auto& [dev, pool] : pools) out.devices[dev].pool_reserved = pool_reserved_bytes(pool);
      for (int32_t dev : ordinals) out.devices[dev].graph = graph_mem_figures(dev);
    }
  }
  const uint64_t t1 = now_ns();
  if (ticket.wait()) {
    for (const auto& [dev, figures] : reading->figures) out.devices[dev].nvml = figures;
  } else {
    out.nvml_missed = !uuids.empty();
  }
  g_sampling_cost.add(now_ns() - t1, t1 - t0);
  return out;
}

}  // namespace

void take_snapshot(format::SnapshotReason reason) {
  State& s = state();
  g_sampling_cost.snapshots.fetch_add(1, std::memory_order_relaxed);
  for (int attempt = 1;; ++attempt) {
    const DeviceSamples samples = sample_devices();
    std::lock_guard lock(s.mu);
    // A reading that missed its wait is not asked again: the next one would wait too.
    if (s.append_snapshot(reason, samples, attempt < 3 && !samples.nvml_missed)) return;
  }
}

void log_sampling_cost() {
  const SamplingCost& c = g_sampling_cost;
  log_info(
      "snapshots: {} ({} samplings); NVML {:.3f} ms in all, {:.3f} ms at most; driver {:.3f} ms in all, {:.3f} ms at "
      "most",
      c.snapshots.load(), c.samplings.load(), c.nvml_ns.load() / 1e6, c.nvml_max_ns.load() / 1e6,
      c.driver_ns.load() / 1e6, c.driver_max_ns.load() / 1e6);
}

bool peak_rose_since_snapshot() {
  State& s = state();
  std::lock_guard lock(s.mu);
  return s.peak_rises != s.peak_rises_at_snapshot;
}

void snapshots_after_fork_child() { g_sampling_cost.reset(); }

}  // namespace cumemtrace::interpose
