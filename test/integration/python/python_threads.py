"""Python frames under thread churn: 10 waves of 8 threads at once, each allocating and
freeing 200 times through ctypes (which drops the GIL, so hooks run side by side), and
keeping its last allocation. The 80 kept ones must form one leak group whose Python frames
name alloc_free and worker; python_frames_test.cpp says which lines."""
import ctypes
import sys
import threading

rt = ctypes.CDLL(sys.argv[1])
rt.cudaFree.argtypes = [ctypes.c_void_p]
kept = []


def alloc_free(n):
    for i in range(n):
        p = ctypes.c_void_p()
        assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(4096)) == 0
        if i == n - 1:
            kept.append(p)
        else:
            assert rt.cudaFree(p) == 0


def worker():
    alloc_free(200)


for wave in range(10):
    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
