#!/usr/bin/env python3
"""Out-of-memory failures of the kinds cumemtrace's report diagnoses, and two short-lived
peaks, on a real GPU (docs/validation.md, "Post-mortem"). usage: oom_kinds.py MODE

  cached   B = 55 % of the card (rounded to 2 MiB) is allocated and freed to PyTorch's
           cache, 30 medium tensors are carved out of the cached block, then B is
           requested again: cudaMalloc fails although PyTorch "has" the memory
  pool     PyTorch's cudaMallocAsync backend frees 60 % of the card back to the pool,
           which keeps it; a cudaMalloc of 60 % through the runtime then fails
  holder   (helper) holds 80 % of the card until its stdin closes
  other    starts `holder` in a second process, then asks for 40 % of the card
  peak15   a 15 GiB peak freed at once by empty_cache()
Prints one line per outcome; exit status 0 when the failure (or peak) happened as planned."""
import ctypes
import glob
import os
import subprocess
import sys
import time

import torch

MiB = 1 << 20


def oom(fn):
    try:
        fn()
    except torch.OutOfMemoryError as e:
        print("OutOfMemoryError:", str(e).splitlines()[0][:160])
        return 0
    print("no OOM")
    return 1


def cached():
    total = torch.cuda.mem_get_info()[1]
    b = int(total * 0.55) // (2 * MiB) * (2 * MiB)
    x = torch.empty(b, dtype=torch.uint8, device="cuda")
    del x  # back to PyTorch's cache, not to the driver
    medium = [torch.empty(b // 40, dtype=torch.uint8, device="cuda") for _ in range(30)]
    print(f"B = {b:,} B, 30 medium tensors of {b // 40:,} B live")
    rc = oom(lambda: torch.empty(b, dtype=torch.uint8, device="cuda"))
    del medium
    return rc


def runtime():
    for pattern in ("libcudart.so.13*", "libcudart.so*"):
        for d in [os.path.join(os.path.dirname(torch.__file__), "lib")] + glob.glob(
                os.path.join(os.path.dirname(os.path.dirname(torch.__file__)), "nvidia", "*", "lib")):
            for path in sorted(glob.glob(os.path.join(d, pattern))):
                return ctypes.CDLL(path)
    return ctypes.CDLL("libcudart.so")


def pool():
    total = torch.cuda.mem_get_info()[1]
    n = int(total * 0.6) // (2 * MiB) * (2 * MiB)
    x = torch.empty(n, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    del x  # back to the stream-ordered pool, which keeps it until the stream synchronises
    rt = runtime()
    p = ctypes.c_void_p()
    r = rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(n))
    print(f"cudaMalloc({n:,}) through {rt._name} -> {r}")
    return 0 if r != 0 else 1


def holder():
    total = torch.cuda.mem_get_info()[1]
    x = torch.empty(int(total * 0.8) // (2 * MiB) * (2 * MiB), dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    print("holding", x.numel(), flush=True)
    sys.stdin.read()
    return 0


def other():
    h = subprocess.Popen([sys.executable, __file__, "holder"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env={k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD",)})
    print("second process:", h.stdout.readline().strip(), "pid", h.pid)
    total = torch.cuda.mem_get_info()[1]
    rc = oom(lambda: torch.empty(int(total * 0.4), dtype=torch.uint8, device="cuda"))
    h.stdin.close()
    h.wait()
    return rc


def peak15():
    x = torch.empty(15 << 30, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    del x
    torch.cuda.empty_cache()
    time.sleep(0.5)
    print("15 GiB peak freed at once")
    return 0


if __name__ == "__main__":
    sys.exit({"cached": cached, "pool": pool, "holder": holder, "other": other, "peak15": peak15}[sys.argv[1]]())
