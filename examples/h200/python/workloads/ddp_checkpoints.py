"""DDP training on two GPUs (issue 12 §4), run with torchrun --nproc-per-node 2 under
`cumemtrace run`: a small Transformer wrapped in DistributedDataParallel, 6 steps. After
each step (synchronized), the rank prints one JSON line with the CLOCK_MONOTONIC time and
torch.cuda.memory_reserved() of its own device, which ddp_check.py compares with what the
rank's trace says was live at that moment."""
import json
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
dist.init_process_group("nccl", device_id=torch.device("cuda", local))
model = torch.nn.Sequential(*[torch.nn.TransformerEncoderLayer(512, 8, batch_first=True) for _ in range(4)]).cuda()
ddp = DistributedDataParallel(model, device_ids=[local])
opt = torch.optim.AdamW(ddp.parameters())
for step in range(6):
    loss = ddp(torch.randn(32, 128, 512, device="cuda")).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    print(json.dumps({"rank": rank, "device": local, "step": step, "t_ns": time.monotonic_ns(),
                      "memory_reserved": torch.cuda.memory_reserved(local),
                      "segments": torch.cuda.memory_stats(local).get("segment.all.current")}), flush=True)
dist.barrier()
dist.destroy_process_group()
