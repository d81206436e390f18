#include "hooks/context_probe.h"

#include "probe/stream_capture.h"
#include "probe/driver_api.h"
#include "base/errno_guard.h"
#include "probe/nvml.h"
#include "probe/sampler.h"
#include "track/tracker.h"

namespace cumemtrace::interpose {
namespace {

std::string uuid_of(CUdevice dev) {
  const DeviceFacts f = device_facts(dev);
  return f.uuid_known ? nvml_uuid_string(f.uuid) : std::string();
}

}  // namespace

ContextProbe::ContextProbe(const DriverCall& call, CUdevice dev, Mode mode) : dev_(dev) {
  if (!call.recording()) return;
  const ErrnoGuard keep_errno;  // loading NVML may set it (ENOENT when it is missing)
  creates_ = true;
  new_ = mode == kNew;
  const DriverApi* d = driver_api();
  if (mode == kPrimary) {
    // During a stream capture the driver may not be asked (probe/stream_capture.h); a capture needs a
    // live context on its device, so a retain then almost surely creates nothing.
    const OwnCudaCalls own;
    unsigned flags = 0;
    int active = 0;
    // Retaining an already active primary context creates nothing.
    if (!own ||
        (d && d->primary_ctx_get_state && d->primary_ctx_get_state(dev, &flags, &active) == CUDA_SUCCESS && active))
      creates_ = false;
  }
  if (!creates_) return;
  uuid_ = uuid_of(dev);  // once: the driver is asked for it only here (not during a capture)
  const NvmlFigures before = nvml_query_in_time(uuid_);
  measured_ = before.process_used != format::kUnknown64;
  used_before_ = before.process_used;
}

void ContextProbe::record(DriverCall& call, CUresult r, uint64_t ctx) const {
  if (!creates_) return;
  const ErrnoGuard keep_errno;
  if (new_ && r == CUDA_SUCCESS) note_created_context(ctx, dev_);
  uint64_t cost = 0;
  if (r == CUDA_SUCCESS && measured_) {
    const NvmlFigures after = nvml_query_in_time(uuid_);
    if (after.process_used != format::kUnknown64 && after.process_used > used_before_)
      cost = after.process_used - used_before_;
  }
  call.record({.op = format::Op::kContextCreate,
               .kind = format::Kind::kContext,
               .result = r,
               .address = ctx,
               .size = cost,
               .handle = ctx,
               .device = dev_});
}

}  // namespace cumemtrace::interpose
