"""A max_peak failure names what held the memory at the test's peak
(test/integration/python/pytest_plugin_test.cpp): not what was freed before the peak nor
what came after it. CUDART names the simulated libcudart; MiB = 1,048,576 B."""
import ctypes
import os

import pytest

rt = ctypes.CDLL(os.environ["CUDART"])
MiB = 1 << 20
kept = []


def malloc(size):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(size)) == 0
    return p


@pytest.mark.cuda_memory(max_peak="8MiB")
def test_peak_held():
    rt.cudaFree(malloc(6 * MiB))  # a lower peak, freed before the test's own
    a = malloc(4 * MiB)
    b = malloc(4 * MiB + 512)  # the peak: 8 MiB + 512 B, a and b live
    rt.cudaFree(a)
    kept.append(malloc(1 * MiB))  # after the peak, live at the end
    rt.cudaFree(b)
