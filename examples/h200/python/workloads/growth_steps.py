#!/usr/bin/env python3
"""A training loop marked per step with torch.cuda.nvtx.range_push("step"), for the growth
analysis (docs/validation.md): `normal` trains a 4-layer MLP for 12 steps with AdamW;
`leak` is the same loop that also appends each step's loss to a list it never clears —
the loss keeps its autograd graph, so every step's saved activations stay allocated.
Run under `cumemtrace run` (it sets NVTX_INJECTION64_PATH)."""
import sys

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "normal"
torch.manual_seed(0)
layers = []
for _ in range(4):
    layers += [torch.nn.Linear(4096, 4096), torch.nn.GELU()]
model = torch.nn.Sequential(*layers).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
history = []
for step in range(12):
    torch.cuda.nvtx.range_push("step")
    x = torch.randn(2048, 4096, device="cuda")
    out = model(x)
    loss = out.float().pow(2).mean()
    if mode == "leak":
        # Kept with its graph: the activations of this step are never freed.
        history.append(out)
    opt.zero_grad(set_to_none=True)
    loss.backward(retain_graph=(mode == "leak"))
    opt.step()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
print(mode, "12 steps; memory_allocated", torch.cuda.memory_allocated(), "reserved", torch.cuda.memory_reserved())
