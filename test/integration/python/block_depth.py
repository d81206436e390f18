"""A tensor's block events from a Python stack (python/block_depth_test.cpp): the stand-in
for PyTorch's caching allocator (sim/torch's libc10_cuda.so) reached through ctypes from
a few Python frames, one block kept and one freed.

usage: block_depth.py LIBC10_CUDA"""
import ctypes
import sys

c10 = ctypes.CDLL(sys.argv[1])
c10.simtorch_malloc.restype = ctypes.c_void_p
c10.simtorch_malloc.argtypes = [ctypes.c_size_t, ctypes.c_int]
c10.simtorch_free.argtypes = [ctypes.c_void_p]


def tensor(size):
    return c10.simtorch_malloc(size, 0)


def step():
    kept = tensor(1 << 20)
    c10.simtorch_free(tensor(2 << 20))
    return kept


print("kept" if step() else "none")
