#!/usr/bin/env python3
"""Checks a trace's trace entries against PyTorch's own figures (trace_entries_loop.py's LOG).

usage: trace_entries_compare.py DUMP LOG

Replays the block records of `cumemtrace dump` here, on their own: at each checkpoint the
live blocks' bytes must equal allocated_bytes, and the requested bytes of the live blocks and
of the frees still waiting on other streams requested_bytes (PyTorch takes a block's
requested bytes off only when its free completes; every block must have a trace entry), and
at the snapshot every
live block must be an active_allocated block of the same size and requested size, every
pending free an active_pending_free block, each in a segment of the same stream and pool.
"""
import json
import re
import sys

UNKNOWN = 2**64 - 1
events = []
for line in open(sys.argv[1]):
    if " block-event " not in line:
        continue
    f = dict(re.findall(r"(\w+)=(\S+)", line))
    events.append({"t": int(f["t"]), "op": int(f["op"]), "addr": int(f["addr"], 16), "size": int(f["size"]),
                   "flags": int(f["flags"]), "requested": int(f.get("requested", UNKNOWN)),
                   "stream": int(f["stream"], 16) if "stream" in f else None,
                   "pool": tuple(int(x) for x in f["pool"].split(",")) if "pool" in f else None})
checkpoints, snapshot = [], None
for line in open(sys.argv[2]):
    j = json.loads(line)
    if "snapshot" in j:
        snapshot, snapshot_t = j["snapshot"], j["t"]
    else:
        checkpoints.append(j)

live, pending, i, ok = {}, {}, 0, True
counts = {}


def apply(e):
    counts[e["op"]] = counts.get(e["op"], 0) + 1
    if e["op"] == 1:
        live[e["addr"]] = e
    elif e["op"] == 2:
        b = live.pop(e["addr"], None)
        if b is not None and e["flags"] & 4:
            pending[e["addr"]] = b
    elif e["op"] == 3:
        pending.pop(e["addr"], None)


for c in checkpoints:
    while i < len(events) and events[i]["t"] <= c["t"]:
        apply(events[i])
        i += 1
    size = sum(b["size"] for b in live.values())
    known = [b for b in live.values() if b["requested"] != UNKNOWN]
    requested = sum(b["requested"] for b in known) + sum(b["requested"] for b in pending.values())
    same = size == c["allocated"] and requested == c["requested"] and len(known) == len(live)
    ok &= same
    print(f"t={c['t']} allocated torch {c['allocated']} trace {size}; requested torch {c['requested']} trace "
          f"{requested} ({len(live) - len(known)} blocks without an entry); pending {len(pending)} "
          f"{'equal' if same else 'DIFFERENT'}")
while i < len(events) and events[i]["t"] <= snapshot_t:
    apply(events[i])
    i += 1
print("records by op:", dict(sorted(counts.items())))
pools = sorted({b["pool"] for b in live.values() if b["pool"]})
print("pools of live blocks:", pools, "streams:", sorted({hex(b["stream"]) for b in live.values() if b["stream"] is not None}))
theirs = {}
for seg_addr, total, stream, pool, blocks in snapshot:
    for addr, size, req, state in blocks:
        theirs[addr] = (size, req, state, stream, tuple(pool))
bad = 0
for addr, b in live.items():
    t = theirs.get(addr)
    if not t or t[2] != "active_allocated" or t[0] != b["size"] or t[1] != b["requested"] or t[3] != b["stream"] \
            or t[4] != b["pool"]:
        bad += 1
        if bad <= 5:
            print("live block differs:", hex(addr), b, t)
for addr, b in pending.items():
    t = theirs.get(addr)
    if not t or t[2] != "active_pending_free" or t[0] != b["size"]:
        bad += 1
        print("pending block differs:", hex(addr), b, t)
active = sum(1 for t in theirs.values() if t[2] == "active_allocated")
waiting = sum(1 for t in theirs.values() if t[2] == "active_pending_free")
print(f"snapshot: {active} active_allocated, {waiting} active_pending_free, {len(theirs)} blocks; trace: {len(live)} "
      f"live, {len(pending)} pending; {bad} differ")
ok &= bad == 0 and active == len(live) and waiting == len(pending)
print("ALL EQUAL" if ok else "NOT ALL EQUAL")
sys.exit(0 if ok else 1)
