#!/usr/bin/env python3
"""torch.cuda.graph: a capture of 3 x 1 GiB tensors made and dropped inside the graph, then
replays. PyTorch captures into a private pool of its caching allocator (ordinary cudaMalloc
segments, tracked as usual), not into CUDA graph memory nodes: the graph memory pool should
stay at 0 while memory_reserved() grows. Prints both after each step."""
import ctypes

import torch


def graph_pool():
    """cudaDeviceGetGraphMemAttribute(reserved current, used current), MiB, through the runtime
    PyTorch loaded; None when it cannot be reached."""
    rt = None
    for name in ("libcudart.so.13", "libcudart.so.12", "libcudart.so"):
        try:
            rt = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if rt is None:
        return None
    figures = []
    for attr in (3, 2):  # cudaGraphMemAttrReservedMemCurrent, cudaGraphMemAttrUsedMemCurrent
        v = ctypes.c_ulonglong(0)
        if rt.cudaDeviceGetGraphMemAttribute(0, attr, ctypes.byref(v)) != 0:
            return None
        figures.append(v.value >> 20)
    return tuple(figures)


def show(step):
    torch.cuda.synchronize()
    print(f"{step:<12} memory_reserved {torch.cuda.memory_reserved() >> 20} MiB, "
          f"memory_allocated {torch.cuda.memory_allocated() >> 20} MiB, graph pool (reserved, used) MiB {graph_pool()}")


def main():
    dev = torch.device("cuda", 0)
    x = torch.ones(1 << 20, device=dev)
    show("start")
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up outside the capture, as PyTorch's docs ask
        for _ in range(2):
            y = torch.empty(256 << 20, device=dev).fill_(1.0).sum() + x.sum()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        total = x.sum()
        for _ in range(3):
            t = torch.empty(256 << 20, device=dev)  # 1 GiB of float32
            t.fill_(2.0)
            total = total + t.sum()
            del t
    show("captured")
    g.replay()
    show("replayed")
    g.replay()
    show("replayed x2")
    del g, total, y
    torch.cuda.empty_cache()
    show("released")


if __name__ == "__main__":
    main()
