#!/usr/bin/env python3
"""One paragraph per trace from `cumemtrace report --json` on stdin: the NVML split at the
peak (and whether it is of one moment) and each failed allocation's diagnosis."""
import json
import sys

r = json.load(sys.stdin)
for d in r["devices"]:
    n = d.get("nvml_at_peak")
    if d["device"] < 0 or not n:
        continue
    print(f"  device {d['device']}: peak {d['peak']['device_bytes']:,} B; NVML split from a {n['snapshot_reason']}"
          f" reading: at_peak={n['at_peak']} same_moment={n['same_moment']} (reading's tracked {n['device_bytes']:,} B):"
          f" process_used {n['process_used']:,} = footprint {n['footprint']:,} + context {n['context']:,}"
          f" + pool {n['pool_slack']:,} + untracked {n['untracked']:,}")
for f in r["failed_allocations"]:
    d = f["diagnosis"]
    s = f["snapshot"] or {}
    print(f"  failed {f['size']:,} B via {f['api']} from {f['library']}, {f['count']} attempt(s),"
          f" reading at_failure={s.get('at_failure')}: cause {d['cause']} {json.dumps(d['figures'])}")
    for p in f.get("other_processes") or []:
        print(f"    other process pid {p['pid']} using {p['used_bytes']}")
