"""Python frames of real PyTorch allocations (issue #9): a model's forward and an
optimizer's state init make cudaMalloc calls through PyTorch's caching allocator, with
the GIL released. Run under the tracer; `cumemtrace report` should name these lines.

    LD_PRELOAD=libcumemtrace.so python3 python_frames.py

Prints the lines it expects, "FILE:LINE in FUNCTION", one per allocation site."""
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4096, 4096)
        self.b = torch.nn.Linear(4096, 4096)

    def forward(self, x):
        h = self.a(x).relu()  # line 18: activations of layer a
        return self.b(h)


def make_model():
    return Model().cuda()  # line 23: the weights


def step(model, opt, x):
    loss = model(x).square().mean()  # line 27: forward
    loss.backward()
    opt.step()  # line 29: Adam's state (exp_avg, exp_avg_sq) on the first step
    opt.zero_grad(set_to_none=True)


def main():
    model = make_model()
    opt = torch.optim.Adam(model.parameters())
    x = torch.randn(8192, 4096, device="cuda")  # line 36: the input
    for _ in range(2):
        step(model, opt, x)
    torch.cuda.synchronize()
    print(f"{__file__}:23 in make_model; :36 in main; :27 in step (forward); :29 in step (opt)")
    print("python", ".".join(map(str, __import__("sys").version_info[:3])), "torch", torch.__version__)


main()
