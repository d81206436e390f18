# Writes a format-1.1 trace (no seals) of N allocations that all stay live, over S stacks of
# D frames each (distinct return addresses, unsymbolized), for sizing `cumemtrace export
# --format memviz` against its live set (docs/performance.md, issue 29).
# Usage: python3 bench/memviz_trace.py OUT.trace N [S [D]]
import struct, sys
n = int(sys.argv[2])
stacks = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
depth = int(sys.argv[4]) if len(sys.argv) > 4 else 48
out = open(sys.argv[1], "wb")
out.write(b"CUMEMTRC" + struct.pack("<HHIQQ", 1, 1, 32, 0, 0))
def rec(t, payload): out.write(struct.pack("<HHI", t, 0, len(payload)) + payload)
def s(x): b = x.encode(); return struct.pack("<I", len(b)) + b
start = 10**12
rec(1, struct.pack("<IIQQQIi", 1, 0, start, 1_700_000_000 * 10**9, 2 << 20, 64, 0) + s("h") + s("prog") + s("0.1"))
rec(9, struct.pack("<H", 1) + s("cudaMalloc"))
rec(2, struct.pack("<iiQ", 0, 0, 141 << 30) + b"\0" * 16 + s("NVIDIA H200"))
rec(3, struct.pack("<QQQ", 0, 0x400000, 0x4000000) + s("/usr/bin/prog") + s(""))
node = 0
innermost = []
for k in range(stacks):
    parent = 0
    for d in range(depth):
        node += 1
        rec(4, struct.pack("<IIQ", node, parent, 0x400000 + k * 0x1000 + d * 0x10))
        parent = node
    innermost.append(parent)
for i in range(n):
    e = struct.pack("<QQQQQIiIiHBBI", start + i, 0x7f0000000000 + i * 0x10000, 4096 + i % 3000, 0, 0, 7, 0,
                    innermost[i % stacks], 0, 1, 1, 1, 0)
    rec(5, e)
rec(8, struct.pack("<QQQ", start + n + 5, n, 0))
