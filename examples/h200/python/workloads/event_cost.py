"""What one allocation costs inside PyTorch (docs/validation.md, runs U and W): torch.empty
of 4-8 KiB and its del, in cudaMallocAsync mode (each reaches the driver), from a Python
stack DEPTH deep; best of 5 x N iterations, in microseconds per iteration (one
allocation, which carries the stacks, and one free, which by default does not).

    PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync python3 event_cost.py [N=20000] [DEPTH=10]
"""
import sys
import time

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
depth = int(sys.argv[2]) if len(sys.argv) > 2 else 10
sizes = [4096 + 512 * (i % 9) for i in range(n)]


def loop():
    start = time.perf_counter_ns()
    for s in sizes:
        t = torch.empty(s, dtype=torch.uint8, device="cuda")
        del t
    return (time.perf_counter_ns() - start) / n / 1000


def nest(k):
    return nest(k - 1) if k > 1 else min(loop() for _ in range(5))


torch.empty(1, device="cuda")
torch.cuda.synchronize()
print(f"us_per_iteration={nest(depth):.3f}")
