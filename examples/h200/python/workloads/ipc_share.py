"""CUDA IPC through torch.multiprocessing (spawn): a producer shares one CUDA tensor of
256 MiB with a consumer, which reads it and lets it go. Run under `cumemtrace run`
(ipc_share.sh does): the producer's trace must count the 256 MiB once (its peak, one
export: counts.shares >= 1), the consumer's must list one import of the exported block
(PyTorch exports the caching allocator's whole segment: 256 MiB, 268,435,456 B, for a
request of exactly that size) and never add it to its own device bytes.

Prints one JSON line per process: role, pid, the tensor's bytes and data_ptr."""
import json
import os
import sys

import torch
import torch.multiprocessing as mp

NBYTES = 256 << 20


def consumer(queue, done):
    t = queue.get()  # opens the producer's IPC handle (cudaIpcOpenMemHandle)
    s = int(t[:4096].sum().item())  # touch it
    print(json.dumps({"role": "consumer", "pid": os.getpid(), "bytes": t.numel() * t.element_size(),
                      "data_ptr": t.data_ptr(), "checksum": s}), flush=True)
    del t
    torch.cuda.synchronize()
    done.set()


def main():
    mp.set_start_method("spawn")
    t = torch.ones(NBYTES, dtype=torch.uint8, device="cuda")
    print(json.dumps({"role": "producer", "pid": os.getpid(), "bytes": t.numel() * t.element_size(),
                      "data_ptr": t.data_ptr(), "expected_import_bytes": NBYTES}), flush=True)
    queue, done = mp.Queue(), mp.Event()
    p = mp.Process(target=consumer, args=(queue, done))
    p.start()
    queue.put(t)  # cudaIpcGetMemHandle on the producer's segment
    done.wait(120)
    p.join(120)
    del t
    return 0 if p.exitcode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
