#!/usr/bin/env python3
"""Compares a `cumemtrace export --format memviz` pickle of a trace's end with
memory_snapshot() taken at that moment (trace_entries_loop.py ... exit), segment for segment
and block for block: address and total size of each segment; address, size, requested
size and state of each block. The export's segments outside the cache (an allocation the
driver gave that no block lay in: one block as large as itself) are counted and left out.

usage: memviz_snapshot_compare.py EXPORT.pickle LOG.jsonl
Prints the counts and every difference (at most 20); exits 1 on any.
"""
import json
import pickle
import sys

export = pickle.load(open(sys.argv[1], "rb"))
snapshot = next(json.loads(l)["snapshot"] for l in open(sys.argv[2]) if '"snapshot"' in l)


def ours():
    segs = {}
    for s in export["segments"]:
        blocks, at = [], s["address"]
        for b in s["blocks"]:
            blocks.append((at, b["size"], b.get("requested_size", b["size"]), b["state"]))
            at += b["size"]
        segs[s["address"]] = (s["total_size"], blocks)
    return segs


def theirs():
    return {s[0]: (s[1], [tuple(b) for b in s[4]]) for s in snapshot}


a, b = ours(), theirs()
diffs = []
# The export shows every allocation the driver gave as a segment; one PyTorch's cache never
# used (a library's cudaMalloc) is one block as large as itself, and the snapshot has none.
outside = [addr for addr, (n, bl) in a.items()
           if addr not in b and len(bl) == 1 and bl[0][1] == n and bl[0][3] == "active_allocated"]
for addr in outside:
    del a[addr]
for addr in sorted(set(a) | set(b)):
    if addr not in a or addr not in b:
        diffs.append(f"segment {addr:#x}: {'only in the snapshot' if addr not in a else 'only in the export'}")
        continue
    (n_a, bl_a), (n_b, bl_b) = a[addr], b[addr]
    if n_a != n_b:
        diffs.append(f"segment {addr:#x}: total_size {n_a} (export) vs {n_b} (snapshot)")
    # A free block's requested size means nothing: PyTorch keeps its last tensor's.
    key = lambda blk: (blk[0], blk[1], blk[2] if blk[3].startswith("active") else 0, blk[3])
    ka, kb = [key(x) for x in bl_a], [key(x) for x in bl_b]
    for x in sorted(set(ka) ^ set(kb)):
        diffs.append(f"block {x[0]:#x} size {x[1]} requested {x[2]} {x[3]}: only in the {'export' if x in ka else 'snapshot'}")
blocks = sum(len(v[1]) for v in b.values())
active = sum(1 for v in b.values() for x in v[1] if x[3].startswith("active"))
print(f"memviz vs snapshot: {len(b)} segments, {blocks} blocks ({active} active) in the snapshot; "
      f"{len(a)} segments, {sum(len(v[1]) for v in a.values())} blocks in the export (and {len(outside)} "
      f"allocations outside the cache, left out); {len(diffs)} differences")
for d in diffs[:20]:
    print("  ", d)
sys.exit(1 if diffs else 0)
