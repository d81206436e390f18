#!/usr/bin/env python3
"""A training loop whose tensors only PyTorch's caching allocator sees (docs/validation.md,
"Inside PyTorch's cache"): an MLP trained with Adam, an NVTX range "step" per step, and
one 4 MiB tensor kept per step in a list (the leak the segments never show).

usage: blocks_loop.py LOG STEPS [oom] [nomark] [exit]

Writes JSON Lines to LOG: a checkpoint after each step ({"t": monotonic ns after
synchronize, "allocated": memory_allocated(), "reserved": memory_reserved()}), then the
allocator's block map at the end ({"snapshot": [[address, size, state], ...], "t": monotonic
ns after it} from torch.cuda.memory_snapshot(), and "segments": [[address, total_size,
[[size, state], ...]], ...]). With "oom": after the loop, tensors of 1 GiB kept until the
allocator refuses (live tensors fill the device: the cause must be demand). With "nomark":
no NVTX range (the iterations must be found from the blocks). With "exit": os._exit(0)
right after the snapshot, so that the trace's end is the snapshot's state.
"""
import json
import os
import sys
import time

import torch

log = open(sys.argv[1], "w")
steps = int(sys.argv[2])
oom = "oom" in sys.argv[3:]
marked = "nomark" not in sys.argv[3:]
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda()
opt = torch.optim.Adam(model.parameters())
kept = []


def checkpoint():
    torch.cuda.synchronize()
    log.write(json.dumps({"t": time.monotonic_ns(), "allocated": torch.cuda.memory_allocated(),
                          "reserved": torch.cuda.memory_reserved()}) + "\n")


for step in range(steps):
    if marked:
        torch.cuda.nvtx.range_push("step")
    x = torch.randn(256, 1024, device="cuda")
    loss = model(x).pow(2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    kept.append(torch.empty(1024 * 1024, device="cuda"))  # the tensor kept per step: 4 MiB
    if marked:
        torch.cuda.nvtx.range_pop()
    checkpoint()

blocks, segments = [], []
for seg in torch.cuda.memory_snapshot():
    segments.append([seg["address"], seg["total_size"], [[b["size"], b["state"]] for b in seg["blocks"]]])
    for b in seg["blocks"]:
        blocks.append([b["address"], b["size"], b["state"]])
log.write(json.dumps({"snapshot": blocks, "segments": segments, "t": time.monotonic_ns()}) + "\n")
log.flush()
if "exit" in sys.argv[3:]:
    os._exit(0)

if oom:
    hold = []
    try:
        while True:
            hold.append(torch.empty(1 << 28, device="cuda"))  # 1 GiB of float32
    except torch.OutOfMemoryError:
        print(f"oom after {len(hold)} GiB", flush=True)
