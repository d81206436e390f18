"""Two ranks on two GPUs with NCCL (issue 12): run with torchrun --nproc-per-node 2 under
`cumemtrace run`. Each rank all-reduces a 256 MiB tensor five times. Rank 1 also keeps
512 MiB more than rank 0 (a rank-imbalance finding) and makes one small tensor on GPU 0,
not its own (a foreign-device finding: a context on GPU 0, the classic reason GPU 0 runs
out first). Prints each rank's memory_reserved() per device as one JSON line."""
import json
import os

import torch
import torch.distributed as dist

rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
dist.init_process_group("nccl", device_id=torch.device("cuda", local))
x = torch.ones(64 << 20, device="cuda")  # 256 MiB of float32
extra = torch.empty(512 << 20, dtype=torch.uint8, device="cuda") if rank == 1 else None
stray = torch.zeros(1024, device="cuda:0") if rank == 1 and local != 0 else None
for _ in range(5):
    dist.all_reduce(x)
torch.cuda.synchronize()
reserved = {d: torch.cuda.memory_reserved(d) for d in range(torch.cuda.device_count())}
print(json.dumps({"rank": rank, "sum": x[0].item(), "reserved": reserved}), flush=True)
dist.barrier()
dist.destroy_process_group()
