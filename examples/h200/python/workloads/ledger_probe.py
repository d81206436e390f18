"""Where the device memory that no allocation explains goes (issue 12 §5, the byte ledger).

One process, untraced, steps that each load one more part of CUDA's libraries: after each,
NVML's figure for this process (nvidia-smi's) minus what PyTorch's caching allocator has
reserved is memory outside every allocation PyTorch made: the context, module images
(kernels loaded lazily at their first launch under CUDA_MODULE_LOADING=LAZY, the default),
library handles and workspaces. Run it with CUDA_MODULE_LOADING=LAZY and =EAGER.
Prints one JSON line per step: {"step", "nvml_process_used", "reserved", "outside"} in bytes.
"""
import json
import os
import subprocess

import torch


def process_used():
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        pid, used = [x.strip() for x in line.split(",")]
        if int(pid) == os.getpid():
            return int(used) << 20  # nvidia-smi gives MiB
    return None


def step(name):
    torch.cuda.synchronize()
    used, reserved = process_used(), torch.cuda.memory_reserved()
    print(json.dumps({"step": name, "loading": os.environ.get("CUDA_MODULE_LOADING", "LAZY(default)"),
                      "nvml_process_used": used, "reserved": reserved,
                      "outside": None if used is None else used - reserved}), flush=True)


x = torch.ones(1, device="cuda")
step("context + first tensor")
a = torch.randn(1024, 1024, device="cuda")
step("randn (curand kernels)")
b = a @ a
step("first matmul (cuBLAS handle, workspace, kernels)")
c = torch.nn.functional.conv2d(torch.randn(8, 3, 64, 64, device="cuda"), torch.randn(16, 3, 3, 3, device="cuda"))
step("first conv2d (cuDNN handle, kernels)")
for op in (torch.sin, torch.exp, torch.tanh, torch.sigmoid, torch.relu, torch.log1p, torch.erf):
    op(a)
step("7 more elementwise kernels")
model = torch.nn.Sequential(*[torch.nn.TransformerEncoderLayer(512, 8, batch_first=True) for _ in range(2)]).cuda()
opt = torch.optim.AdamW(model.parameters())
for _ in range(3):
    loss = model(torch.randn(16, 128, 512, device="cuda")).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
step("3 training steps of 2 encoder layers")
