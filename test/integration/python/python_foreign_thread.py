"""A thread Python did not start calls back into Python 5 times; each callback keeps a
64 KiB allocation, and between callbacks the thread keeps a 128 KiB one with no Python on
its stack (test/programs/py_foreign_thread.cpp). python_frames_test.cpp checks that the
first have the callback's frame and the second none."""
import ctypes
import sys

rt = ctypes.CDLL(sys.argv[1])
helper = ctypes.CDLL(sys.argv[2])
kept = []


@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)
def callback(i):
    p = ctypes.c_void_p()
    kept.append(p)
    return rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(65536))


allocate = ctypes.cast(rt.cudaMalloc, ctypes.c_void_p)
helper.run_foreign_thread.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
assert helper.run_foreign_thread(ctypes.cast(callback, ctypes.c_void_p), allocate, 5, 131072) == 0
