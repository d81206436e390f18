"""A training loop whose DataLoader forks 4 workers each epoch, while the tracer's writer
snapshots (NVML included) every millisecond: the forks must neither hang nor slow the job.
   python3 fork_workers.py [EPOCHS]      prints one summary line"""
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Random(Dataset):
    def __len__(self):
        return 512

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(256, generator=g), i % 10


def main():
    epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    start, steps = time.time(), 0
    for _ in range(epochs):
        for x, y in DataLoader(Random(), batch_size=32, num_workers=4, persistent_workers=False):
            x, y = x.to(dev), y.to(dev)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
    torch.cuda.synchronize()
    print(f"epochs {epochs} steps {steps} workers forked {epochs * 4} seconds {time.time() - start:.2f}")


if __name__ == "__main__":
    main()
