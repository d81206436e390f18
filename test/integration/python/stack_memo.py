"""Call paths that trip up a stack reused from the previous event of a thread (issue 26):
run under CUMEMTRACE_CHECK_STACKS=1, which interns every event's stacks the full way too
(stack_memo_test.cpp). Paths change at every depth, recurse, and put frames at addresses
that frames of the previous event had, with the same code and offset but other callers
(two functions of one frame size calling the same one, a generator resumed from two
places) or another code object at a freed one's address (exec in a loop); threads
interleave, more of them than the tracer keeps memos for. Allocations of the sizes the
test looks for are kept (leaks, named by their call sites); the rest are freed."""
import ctypes
import random
import sys
import threading

rt = ctypes.CDLL(sys.argv[1])
rt.cudaFree.argtypes = [ctypes.c_void_p]
kept = []


def alloc(size=512, keep=False):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(size)) == 0
    if keep:
        kept.append(p)
    else:
        assert rt.cudaFree(p) == 0


def path(k, bits):
    # One of two call sites (lines) at each level.
    if k == 0:
        return alloc()
    if bits >> (k - 1) & 1:
        return path(k - 1, bits)
    return path(k - 1, bits)


def recurse(n):
    if n:
        return recurse(n - 1)
    alloc()


def inner(size, keep):
    alloc(size, keep)


# Same bodies, so the same frame size: inner's frame lands where it was, with the same
# code and offset, under another caller.
def caller_a(size=512, keep=False):
    inner(size, keep)


def caller_b(size=512, keep=False):
    inner(size, keep)


def gen():
    while True:
        size, keep = yield
        alloc(size, keep)


def resume_x(g, size=512, keep=False):
    g.send((size, keep))


def resume_y(g, size=512, keep=False):
    g.send((size, keep))


names = []


def exec_loop(base, keep):
    # A new code object per round, often at the address of the one freed before it, run
    # at the same depth and offset: only its file name differs. The names are kept, so
    # that each is a str at an address of its own (one at a freed name's address would
    # be read as that name: README, "What it does not see").
    for i in range(8):
        size = base + i * 4096 if keep else 512
        names.append(f"<exec {base} {i}>")
        exec(compile(f"alloc({size}, {keep})", names[-1], "exec"), {"alloc": alloc})


def mixed(seed, rounds):
    r = random.Random(seed)
    g = gen()
    next(g)
    for _ in range(rounds):
        what = r.randrange(6)
        if what == 0:
            path(8, r.randrange(256))
        elif what == 1:
            recurse(r.randrange(40))
        elif what == 2:
            (caller_a if r.randrange(2) else caller_b)()
        elif what == 3:
            (resume_x if r.randrange(2) else resume_y)(g)
        elif what == 4:
            recurse(140 + r.randrange(4))  # past the 128 Python frames an event keeps
        else:
            exec_loop(1 << 30, False)


def main():
    # Every depth changes: bit k of the path flips every 2^k steps, and random orders.
    for bits in range(256):
        path(8, bits)
    for bits in random.Random(1).sample(range(256), 256):
        path(8, bits)
    for n in list(range(30)) + list(range(30, -1, -1)):
        recurse(n)
    # Kept ones, each right after the other caller ran, so the previous event's stack
    # differs from the kept one's only above the shared frames.
    caller_a()
    caller_b(5 << 20, True)
    caller_b()
    caller_a(6 << 20, True)
    g = gen()
    next(g)
    resume_x(g)
    resume_y(g, 7 << 20, True)
    resume_y(g)
    resume_x(g, 8 << 20, True)
    exec_loop(9 << 20, True)
    threads = [threading.Thread(target=mixed, args=(seed, 60)) for seed in range(72)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    mixed(100, 300)


main()
