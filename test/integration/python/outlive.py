"""Leaves a process behind: the forked child waits until this process has exited (end
of file on a pipe only the parent writes to), then makes one allocation through the
simulated runtime and exits normally. It always outlives the command."""
import ctypes
import os
import sys

r, w = os.pipe()
if os.fork() == 0:
    os.close(w)
    os.read(r, 1)
    rt = ctypes.CDLL(sys.argv[1])
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)) == 0
    sys.exit(0)
print("parent done")
