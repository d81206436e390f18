"""The cuda_memory marker with PyTorch (docs/validation.md): run with
`cumemtrace run -- python -m pytest -p cumemtrace.pytest_plugin` from examples/h200/.
The first test warms up cuBLAS (its handle's workspaces stay for the process's life, so a
marked test that made them would be charged with them, as pytest-memray's docs warn of
interpreter caches); the second holds nothing at its end; the third keeps 256 MiB."""
import pytest
import torch

kept = []


def test_warm_up():
    a = torch.randn(4096, 4096, device="cuda")
    (a @ a).sum().item()


@pytest.mark.cuda_memory(max_peak="300 MiB", max_leaked=0)
def test_matmul_frees_what_it_takes():
    a = torch.randn(4096, 4096, device="cuda")  # 64 MiB
    b = a @ a                                   # 64 MiB
    del a, b
    torch.cuda.empty_cache()  # the caching allocator's cache would count as leaked


@pytest.mark.cuda_memory(max_leaked="100 MiB")
def test_keeps_a_tensor():
    kept.append(torch.empty(256 << 20, dtype=torch.uint8, device="cuda"))  # 256 MiB, kept
