#include "read/record_names.h"

namespace cumemtrace {

std::string op_name(format::Op op) {
  using format::Op;
  switch (op) {
    case Op::kAlloc: return "alloc";
    case Op::kFree: return "free";
    case Op::kMap: return "map";
    case Op::kUnmap: return "unmap";
    case Op::kReserve: return "reserve";
    case Op::kReserveFree: return "reserve-free";
    case Op::kPoolTrim: return "pool-trim";
    case Op::kContextCreate: return "context-create";
    case Op::kRetain: return "retain";
    case Op::kGraphLaunch: return "graph-launch";
    case Op::kGraphExecDestroy: return "graph-exec-destroy";
    case Op::kGraphMemTrim: return "graph-mem-trim";
    case Op::kShare: return "share";
  }
  return "op" + std::to_string(int(op));
}

std::string snapshot_reason_name(format::SnapshotReason r) {
  switch (r) {
    case format::SnapshotReason::kPeriodic: return "periodic";
    case format::SnapshotReason::kFailedAllocation: return "failed-allocation";
    case format::SnapshotReason::kExit: return "exit";
    case format::SnapshotReason::kPeak: return "peak";
    case format::SnapshotReason::kSampledPeak: return "sampled-peak";
    case format::SnapshotReason::kLateReading: return "late-reading";
  }
  return "unknown";
}

std::string mark_source_name(format::MarkSource s) {
  switch (s) {
    case format::MarkSource::kApi: return "api";
    case format::MarkSource::kNvtxPush: return "nvtx-push";
    case format::MarkSource::kNvtxMark: return "nvtx-mark";
    case format::MarkSource::kNvtxStart: return "nvtx-start";
    case format::MarkSource::kNvtxPop: return "nvtx-pop";
    case format::MarkSource::kNvtxEnd: return "nvtx-end";
    case format::MarkSource::kTagPush: return "tag-push";
    case format::MarkSource::kTagPop: return "tag-pop";
  }
  return "unknown";
}

std::string_view record_type_name(uint16_t type) {
  switch (static_cast<format::RecordType>(type)) {
#define CUMEMTRACE_RECORD(Name, id, since, label, Fixed, strings) \
  case format::RecordType::k##Name:                               \
    return label;
#include "cumemtrace/records.def"
#undef CUMEMTRACE_RECORD
  }
  return {};
}

}  // namespace cumemtrace
