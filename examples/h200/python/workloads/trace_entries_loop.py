#!/usr/bin/env python3
"""What only PyTorch's trace entries tell (docs/validation.md, "PyTorch's trace entries"):
requested bytes, streams, pools, and frees that wait on another stream.

usage: trace_entries_loop.py LOG STEPS [exit]

An MLP trained with Adam; each step a tensor used on a side stream (record_stream) and
freed while that stream may still use it (its free waits), a tensor kept per step; then a
CUDA graph captured (its private pool), a tensor made in a MemPool, and a last free that
still waits when the snapshot is taken. Writes JSON Lines
to LOG: after each step {"t", "allocated", "requested", "reserved"} from memory_stats(),
then {"snapshot": [[segment address, total_size, stream, pool id, [[address, size,
requested_size, state], ...]], ...], "t"} from memory_snapshot(). With `exit`, the
process ends with os._exit(0) right after, so that the trace ends in the snapshot's state
(the interpreter frees nothing on the way out) and an export of its end can be compared
with the snapshot block for block.
"""
import json
import os
import sys
import time

import torch

log = open(sys.argv[1], "w")
steps = int(sys.argv[2])
# The tracer attaches its tracker at the first block PyTorch reports: that one block carries
# no trace entry. Freed here, before any checkpoint.
warm = torch.empty(1, device="cuda")
del warm
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda()
opt = torch.optim.Adam(model.parameters())
side = torch.cuda.Stream()
kept = []


def checkpoint():
    torch.cuda.synchronize()
    s = torch.cuda.memory_stats()
    log.write(json.dumps({"t": time.monotonic_ns(), "allocated": s["allocated_bytes.all.current"],
                          "requested": s["requested_bytes.all.current"],
                          "reserved": s["reserved_bytes.all.current"]}) + "\n")


for step in range(steps):
    x = torch.randn(256, 1024, device="cuda")
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    shared = torch.empty(3_000_001, dtype=torch.uint8, device="cuda")
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        shared.mul_(2)
    shared.record_stream(side)
    del shared
    kept.append(torch.empty(1_000_003, dtype=torch.uint8, device="cuda"))
    checkpoint()

static_x = torch.randn(64, 1024, device="cuda")
warmup = torch.cuda.Stream()
warmup.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(warmup):
    for _ in range(2):
        model(static_x)
torch.cuda.current_stream().wait_stream(warmup)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    static_y = model(static_x)
graph.replay()
pool = torch.cuda.MemPool()
with torch.cuda.use_mem_pool(pool):
    in_pool = torch.empty(5_000_011, dtype=torch.uint8, device="cuda")
# A free that still waits when the snapshot is taken: the side stream sleeps past the next
# allocation, and nothing allocates after it (the allocator looks at events only then).
waiting = torch.empty(7_000_001, dtype=torch.uint8, device="cuda")
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    torch.cuda._sleep(200_000_000)
    waiting.add_(1)
waiting.record_stream(side)
del waiting
last = torch.empty(1_000_003, dtype=torch.uint8, device="cuda")
checkpoint()

snap = torch.cuda.memory_snapshot()
t = time.monotonic_ns()
segments = []
for s in snap:
    blocks, at = [], s["address"]
    for b in s["blocks"]:
        blocks.append([b.get("address", at), b["size"], b.get("requested_size", 0), b["state"]])
        at += b["size"]
    segments.append([s["address"], s["total_size"], s["stream"], list(s.get("segment_pool_id", (0, 0))), blocks])
log.write(json.dumps({"snapshot": segments, "t": t}) + "\n")
log.close()
print("graph pool", graph.pool(), "mem pool", pool.id, "steps", steps)
if sys.argv[3:] == ["exit"]:
    sys.stdout.flush()
    os._exit(0)
