# Writes a format-1.1 trace (no seals) with N allocations over 200 stacks, 3 of 4 freed in
# FIFO order, for timing `cumemtrace export` (docs/performance.md).
# Usage: python3 bench/export_trace.py OUT.trace N
import struct, sys
n = int(sys.argv[2])
out = open(sys.argv[1], "wb")
out.write(b"CUMEMTRC" + struct.pack("<HHIQQ", 1, 1, 32, 0, 0))
def rec(t, payload): out.write(struct.pack("<HHI", t, 0, len(payload)) + payload)
def s(x): b = x.encode(); return struct.pack("<I", len(b)) + b
start = 10**12
rec(1, struct.pack("<IIQQQIi", 1, 0, start, 1_700_000_000 * 10**9, 2 << 20, 32, 0) + s("h") + s("prog") + s("0.1"))
rec(9, struct.pack("<H", 1) + s("cudaMalloc")); rec(9, struct.pack("<H", 2) + s("cudaFree"))
rec(2, struct.pack("<iiQ", 0, 0, 80 << 30) + b"\0" * 16 + s("NVIDIA H200"))
rec(3, struct.pack("<QQQ", 0, 0x400000, 0x500000) + s("/usr/bin/prog") + s(""))
for i in range(1, 201):
    rec(4, struct.pack("<IIQ", i, 0 if i == 1 else 1, 0x400000 + i * 16))
def ev(t, op, addr, size, stack): return struct.pack("<QQQQQIiIiHBBI", start + t, addr, size, 0, 0, 7, 0, stack, 0, 1 if op == 1 else 2, op, 1, 0)
live = []
for i in range(n):
    a = 0x7f0000000000 + i * 4096
    rec(5, ev(2 * i, 1, a, 1024 + i % 3000, 1 + i % 200))
    live.append(a)
    if i % 4 != 0:
        rec(5, ev(2 * i + 1, 2, live.pop(0), 0, 0))
rec(8, struct.pack("<QQQ", start + 2 * n + 5, n + n - (n + 3) // 4, 0))  # End: events written
