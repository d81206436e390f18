#!/usr/bin/env python3
"""One CUDA graph capture as PyTorch users write it, in PyTorch's default global capture
mode: ten 64 MiB tensors, each worked on by a side stream forked into and joined back to
the capture (wait_stream, record_stream), inside torch.cuda.graph(g); then a replay. A CUDA call from any other
thread during the capture (a tracer's snapshot, say) makes it fail with
cudaErrorStreamCaptureInvalidated.

Prints one line: "capture ok" or "capture failed: <error>". Exit status 0 or 1."""
import sys
import time

import torch


def main():
    dev = torch.device("cuda", 0)
    side = torch.cuda.Stream()
    static_in = torch.randn(16 << 20, device=dev)  # 64 MiB of float32
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            cur = torch.cuda.current_stream()
            outs = []
            for i in range(10):
                t = torch.empty(16 << 20, device=dev)  # 64 MiB, from the graph's private pool
                t.copy_(static_in)
                side.wait_stream(cur)  # fork the side stream into the capture ...
                with torch.cuda.stream(side):
                    t.mul_(i + 1)
                t.record_stream(side)
                cur.wait_stream(side)  # ... and join it back
                outs.append(t)
                time.sleep(0.005)  # the capture lasts over several 10 ms snapshot periods
            static_out = torch.stack([o.sum() for o in outs]).sum()
        g.replay()
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - the error is the result
        print(f"capture failed: {e}".splitlines()[0])
        return 1
    expected = static_in.sum().item() * 55
    got = static_out.item()
    ok = abs(got - expected) <= 1e-3 * abs(expected) + 1
    print("capture ok" if ok else f"capture replayed a wrong value: {got} != {expected}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
