#!/usr/bin/env python3
"""PyTorch's own NVTX calls as trace marks: three steps, each in
torch.cuda.nvtx.range_push("step") / range_pop(), each keeping one 64 MiB tensor. Under
`cumemtrace run` (which sets NVTX_INJECTION64_PATH) `cumemtrace dump` shows three marks
"step"."""
import torch

kept = []
for _ in range(3):
    torch.cuda.nvtx.range_push("step")
    kept.append(torch.empty(16 << 20, device="cuda"))
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
print("3 steps")
