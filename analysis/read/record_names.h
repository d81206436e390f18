// The names that the JSON outputs (report --json, export's chrome and jsonl) and `dump`
// give to the trace's enumerations, as docs/trace-format.md spells them. One place, so
// that every output says "failed-allocation" or "nvtx-push" the same way.
#pragma once

#include <string>
#include <string_view>

#include "cumemtrace/trace_format.h"

namespace cumemtrace {

std::string op_name(format::Op op);                          // alloc, free, …, reserve-free
std::string snapshot_reason_name(format::SnapshotReason r);  // periodic, failed-allocation, …
std::string mark_source_name(format::MarkSource s);          // api, nvtx-push, nvtx-mark, nvtx-start, tag-push
// A record type's label in records.def (process, event, py-frame, …); empty when unknown.
std::string_view record_type_name(uint16_t type);

}  // namespace cumemtrace
