"""Tests the cuda_memory marker is run on (test/integration/marks_test.cpp): each reaches the
simulated libcudart through ctypes. CUDART names the library; MiB = 1,048,576 B."""
import ctypes
import os

import pytest

import cumemtrace

rt = ctypes.CDLL(os.environ["CUDART"])
MiB = 1 << 20
kept = []


def malloc(size):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(size)) == 0
    return p


def free(p):
    assert rt.cudaFree(p) == 0


def test_warm_up():
    kept.append(malloc(3 * MiB))  # live before the marked tests: never theirs


@pytest.mark.cuda_memory(max_peak="8MiB", max_leaked=0)
def test_within_limits():
    a, b = malloc(4 * MiB), malloc(4 * MiB)  # peak exactly 8 MiB: a limit is inclusive
    free(a), free(b)


@pytest.mark.cuda_memory(max_peak="8MiB")
def test_peak_over():
    a, b = malloc(4 * MiB), malloc(4 * MiB + 512)
    free(a), free(b)


@pytest.mark.cuda_memory(max_leaked="1 MiB")
def test_leaks():
    kept.append(malloc(1 * MiB))
    kept.append(malloc(2 * MiB))


@pytest.mark.cuda_memory(max_growth="1MiB")
def test_growth_over():
    for _ in range(4):
        cumemtrace.mark("iter")
        kept.append(malloc(2 * MiB))
        free(malloc(8 * MiB))
    cumemtrace.mark("iter")


@pytest.mark.cuda_memory(max_growth="2MiB")
def test_growth_within():
    for _ in range(4):
        cumemtrace.mark("iter")
        kept.append(malloc(2 * MiB))
    cumemtrace.mark("iter")
