#!/usr/bin/env python3
"""Checks a trace's blocks against what PyTorch said (blocks_loop.py's LOG).

usage: blocks_compare.py DUMP LOG

DUMP: `cumemtrace dump TRACE` of the run. The block records are replayed here, on their
own (not by cumemtrace's report): at each checkpoint the bytes of the blocks live then must
equal memory_allocated(), and the last `reserved` a block record carried before it must
equal memory_reserved() when no segment was given back since; at the end the live blocks
must be the snapshot's active_allocated blocks, address for address and size for size.
Prints one line per checkpoint and a verdict; exit 0 when all held.
"""
import json
import re
import sys

events = []
for line in open(sys.argv[1]):
    if " block-event " not in line:
        continue
    f = dict(re.findall(r"(\w+)=(\S+)", line))
    events.append((int(f["t"]), int(f["op"]), int(f["addr"], 16), int(f["size"]),
                   int(f["allocated"]) if "allocated" in f else None, int(f["reserved"]) if "reserved" in f else None))
checkpoints, snapshot = [], None
for line in open(sys.argv[2]):
    j = json.loads(line)
    if "snapshot" in j:
        snapshot, snapshot_t = j["snapshot"], j["t"]
    else:
        checkpoints.append(j)

live, i, ok, reserved = {}, 0, True, None
for c in checkpoints:
    while i < len(events) and events[i][0] <= c["t"]:
        t, op, addr, size, alloc, res = events[i]
        if op == 1:
            live[addr] = size
        elif op == 2:
            live.pop(addr, None)
        if res is not None:
            reserved = res
        i += 1
    mine = sum(live.values())
    same = mine == c["allocated"]
    ok &= same
    print(f"t={c['t']} allocated: torch {c['allocated']} trace {mine} {'equal' if same else 'DIFFERENT'}; "
          f"reserved: torch {c['reserved']} last reported {reserved}")
for t, op, addr, size, alloc, res in events[i:]:
    if snapshot is not None and t > snapshot_t:
        break  # after the snapshot: not in it
    if op == 1:
        live[addr] = size
    elif op == 2:
        live.pop(addr, None)
if snapshot is not None:
    active = {a: s for a, s, state in snapshot if state == "active_allocated"}
    missing = {a: s for a, s in active.items() if live.get(a) != s}
    extra = {a: s for a, s in live.items() if a not in active}
    print(f"snapshot: {len(active)} active blocks, {len(snapshot)} blocks in all; "
          f"{len(active) - len(missing)} equal in the trace, {len(missing)} not; {len(extra)} live in the trace only")
    ok &= not missing and not extra
print("ALL EQUAL" if ok else "NOT ALL EQUAL")
sys.exit(0 if ok else 1)
