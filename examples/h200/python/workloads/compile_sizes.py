#!/usr/bin/env python3
"""torch.compile(mode="reduce-overhead", dynamic=True) over 8 input sizes: Inductor
compiles kernels in subprocesses (vfork + exec) and records CUDA graphs (global capture)
while the tracer runs. After every size a checkpoint in train.py's JSON Lines format, so
check_pytorch.py can compare what PyTorch reserved with what the trace holds then.

usage: compile_sizes.py LOG RUN"""
import json
import os
import sys
import time

import torch

STAT_KEYS = ("segment.all.current", "active_bytes.all.current", "reserved_bytes.all.current")


def main():
    log_path, run = sys.argv[1], sys.argv[2]
    log = open(log_path, "a", buffering=1)

    def write(event, **fields):
        log.write(json.dumps({"run": run, "event": event, **fields}) + "\n")

    write("start", mode="default", pid=os.getpid(), alloc_conf=os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""))
    dev = torch.device("cuda", 0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).to(dev)
    step = torch.compile(model, mode="reduce-overhead", dynamic=True)
    for i, rows in enumerate((64, 96, 128, 192, 256, 384, 512, 768)):
        x = torch.randn(rows, 1024, device=dev)
        for _ in range(3):  # warm-up, record, replay
            y = step(x)
        y.sum().item()
        torch.cuda.synchronize()
        t_ns = time.monotonic_ns()
        stats = torch.cuda.memory_stats()
        write("checkpoint", label=f"size-{rows}", step=i, t_ns=t_ns, memory_reserved=torch.cuda.memory_reserved(),
              memory_allocated=torch.cuda.memory_allocated(), stats={k: stats.get(k) for k in STAT_KEYS})
    write("end")
    print(f"compile_sizes: 8 sizes done, reserved {torch.cuda.memory_reserved():,} B")
    return 0


if __name__ == "__main__":
    sys.exit(main())
