"""Allocations through the simulated runtime (ctypes) from known lines of this file, each
of its own size so that python_frames_test.cpp can find its call site: nested functions,
a thread, a generator, a lambda. Nothing is freed: each is a leak group's call site.
The test names these lines: keep them where they are."""
import ctypes
import sys
import threading

rt = ctypes.CDLL(sys.argv[1])
kept = []


def alloc(size):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(size)) == 0
    kept.append(p)


def middle(size):
    alloc(size)


def outer():
    middle(1 << 20)


def in_thread():
    middle(2 << 20)


def generator():
    for size in (3 << 20,):
        yield alloc(size)


def main():
    outer()
    t = threading.Thread(target=in_thread)
    t.start()
    t.join()
    list(generator())
    (lambda: alloc(4 << 20))()


main()
