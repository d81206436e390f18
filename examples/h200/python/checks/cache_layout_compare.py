#!/usr/bin/env python3
"""Checks `cumemtrace report --json`'s figures inside PyTorch's cache at the end against
torch.cuda.memory_snapshot() taken at the same state (blocks_loop.py ... exit).

usage: cache_layout_compare.py REPORT_JSON LOG

PyTorch's snapshot gives each segment's blocks with their states; the free blocks inside
the cache are its `inactive` blocks. The report's `blocks.devices[0].inside.at_end` must
have as many segments, as many free blocks, the same free bytes and the same largest free
block. Prints both and a verdict; exit 0 when all agree.
"""
import json
import sys

rep = json.load(open(sys.argv[1]))
segments = None
for line in open(sys.argv[2]):
    j = json.loads(line)
    if "segments" in j:
        segments = j["segments"]
inactive = [size for _, _, blocks in segments for size, state in blocks if state == "inactive"]
torch = {"segments": len(segments), "segment_bytes": sum(total for _, total, _ in segments),
         "free_blocks": len(inactive), "free": sum(inactive), "largest_free": max(inactive, default=0)}
d = rep["blocks"]["devices"][0]
mine = {k: d["inside"]["at_end"][k] for k in torch}
print("torch snapshot:", torch)
print("trace at end:  ", mine)
g = rep["growth"]
print("iterations:", g["found_by"], g["iterations"], "loop inside:", (g.get("loop") or {}).get("inside"))
leaks = [s for s in d["sites"] if s["class"] == "leak"]
for s in leaks[:2]:
    print("leak:", s["growth_per_iteration"], s["python_frames"][:1])
ok = mine == torch
print("ALL EQUAL" if ok else "NOT ALL EQUAL")
sys.exit(0 if ok else 1)
