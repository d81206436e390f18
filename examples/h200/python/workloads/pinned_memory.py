"""Pinned host memory the PyTorch way (issue 12 §2): pins three tensors, prints
torch.cuda.host_memory_stats() as one JSON line, keeps the tensors until exit.
Run under the tracer by pinned_check.sh, which compares the figures with the trace's."""
import json

import torch

torch.cuda.init()
kept = [torch.empty(n << 20, dtype=torch.uint8).pin_memory() for n in (100, 50, 200)]
torch.cuda.synchronize()
print(json.dumps(torch.cuda.host_memory_stats()), flush=True)
