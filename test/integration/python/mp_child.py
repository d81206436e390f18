"""A multiprocessing child (fork start method) that makes one allocation through the
simulated runtime with ctypes and returns: multiprocessing ends its children with
os._exit, so no destructor of ours runs there. The parent never touches CUDA."""
import ctypes
import multiprocessing
import sys


def child(runtime):
    rt = ctypes.CDLL(runtime)
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)) == 0


if __name__ == "__main__":
    proc = multiprocessing.get_context("fork").Process(target=child, args=(sys.argv[1],))
    proc.start()
    proc.join()
    print(f"child exited {proc.exitcode}")
