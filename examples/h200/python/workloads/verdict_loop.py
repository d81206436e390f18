#!/usr/bin/env python3
"""Training loops for the verdicts of docs/validation.md (issue 25), with no marks, no NVTX
ranges and no cumemtrace API call: the tool must find the iterations itself.

  normal      a 4-layer MLP trained 16 steps with AdamW: leak-free after the first step.
  loss-graph  the same loop summing each step's loss into `total` without .item(): the sum
              keeps every step's autograd graph, so each step's saved activations stay
              allocated (the classic "total_loss += loss" mistake).
  weights     loads weights once, then runs inference steps that keep nothing: a one-time load.
"""
import sys

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "normal"
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 16
torch.manual_seed(0)


def make_model():
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(4096, 4096), torch.nn.GELU()]
    return torch.nn.Sequential(*layers).cuda()


def train_step(model, opt, x):
    out = model(x)                      # the activations are allocated here
    loss = out.float().pow(2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward(retain_graph=True)
    opt.step()
    return loss


model = make_model()
if mode == "weights":
    with torch.no_grad():
        for step in range(steps):
            y = model(torch.randn(1024, 4096, device="cuda"))
            torch.cuda.synchronize()
else:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    total = torch.zeros((), device="cuda")
    for step in range(steps):
        x = torch.randn(2048, 4096, device="cuda")
        loss = train_step(model, opt, x)
        if mode == "loss-graph":
            total = total + loss        # keeps this step's graph alive
        else:
            total += loss.detach()
        torch.cuda.synchronize()
print(mode, steps, "steps; memory_allocated", torch.cuda.memory_allocated(),
      "reserved", torch.cuda.memory_reserved(), flush=True)
