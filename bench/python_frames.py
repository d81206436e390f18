"""Added cost per event of Python frames (issue #9): cudaMalloc/cudaFree pairs through
ctypes from a Python stack DEPTH frames deep, against the simulated runtime. Run it under
the tracer with CUMEMTRACE_PYTHON=1 and =0 (bench/run_python_frames.sh does both); the
difference per call is what reading the Python frames adds.

    python3 bench/python_frames.py LIBCUDART [DEPTH=20] [PAIRS=20000] [REPS=5] [unique|blocks]

With "unique", each pair comes from a Python call path not seen before: at each of the
DEPTH-2 levels one of two call sites (lines), picked by a bit of a counter that never
repeats, the innermost level taking the lowest bit (as alloc_loop --unique does).

With "blocks", LIBCUDART is instead the simulated libc10_cuda.so (sim/torch) and each pair
is a block taken from and given back to its caching allocator (simtorch_malloc and
simtorch_free): a block event and its free, no driver call, the cost of a tensor's events.

"unique,blocks" takes both. With CYCLE=K in the environment, "unique" goes round K call
paths instead of never repeating one (a training step's few dozen call sites, again and
again).

With COLD_BYTES=N in the environment, each pair is followed by a write over N bytes of a
buffer of the bench's own (e.g. 33554432, more than the last-level cache), so that the
tracer's data is as cold at each event as between two tensors of a real job; the times
then include the writes, and CUMEMTRACE_STACK_STATS=1 gives the hook's parts alone.

Prints one line: depth, pairs, best and median ns per call (a pair is two calls)."""
import ctypes
import os
import statistics
import sys
import time

rt = ctypes.CDLL(sys.argv[1])
depth = int(sys.argv[2]) if len(sys.argv) > 2 else 20
pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
reps = int(sys.argv[4]) if len(sys.argv) > 4 else 5
unique = len(sys.argv) > 5 and "unique" in sys.argv[5].split(",")
blocks = len(sys.argv) > 5 and "blocks" in sys.argv[5].split(",")
cycle = int(os.environ.get("CYCLE", "0"))
if blocks:
    rt.simtorch_malloc.restype = ctypes.c_void_p
    rt.simtorch_free.argtypes = [ctypes.c_void_p]

    def malloc(ref, size):  # the block's address in the c_void_p `ref` points at, as cudaMalloc's
        ctypes.cast(ref, ctypes.POINTER(ctypes.c_void_p))[0] = rt.simtorch_malloc(size, 0)

    free = rt.simtorch_free
else:
    malloc, free = rt.cudaMalloc, rt.cudaFree
    free.argtypes = [ctypes.c_void_p]


cold_bytes = int(os.environ.get("COLD_BYTES", "0"))
cold = ctypes.create_string_buffer(cold_bytes) if cold_bytes else None


def loop(n):
    p = ctypes.c_void_p()
    ref, size = ctypes.byref(p), ctypes.c_size_t(512)
    start = time.perf_counter_ns()
    for i in range(n):
        malloc(ref, size)
        free(p)
        if cold:
            ctypes.memset(cold, i & 0xFF, cold_bytes)
    return (time.perf_counter_ns() - start) / (2 * n)


def one_pair(ref, size, p):
    malloc(ref, size)
    free(p)


def path(k, bits, ref, size, p):
    # Two call sites on two lines: the frame of this level differs by one bit of `bits`.
    if k <= 2:
        return one_pair(ref, size, p)
    if bits >> (k - 3) & 1:
        return path(k - 1, bits, ref, size, p)
    return path(k - 1, bits, ref, size, p)


next_path = 0


def unique_loop(n):
    # The timed loop is the outermost frame here (with the module's): each pair goes down
    # `depth` - 2 levels of path() to one_pair().
    global next_path
    p = ctypes.c_void_p()
    ref, size = ctypes.byref(p), ctypes.c_size_t(512)
    first, next_path = next_path, next_path + n
    start = time.perf_counter_ns()
    for i in range(first, first + n):
        path(depth, i % cycle if cycle else i, ref, size, p)
        if cold:
            ctypes.memset(cold, i & 0xFF, cold_bytes)
    return (time.perf_counter_ns() - start) / (2 * n)


def nest(k, n):
    # The timed loop runs k Python frames deep (this frame and the module's included).
    return nest(k - 1, n) if k > 2 else loop(n)


keep = ctypes.c_void_p()
malloc(ctypes.byref(keep), ctypes.c_size_t(512))  # holds the sim's page: every pair costs the same
run = unique_loop if unique else (lambda n: nest(depth, n))
run(pairs // 10)  # warm-up
times = [run(pairs) for _ in range(reps)]
print(f"depth={depth} unique={int(unique)} blocks={int(blocks)} pairs={pairs} best_ns_call={min(times):.1f} median_ns_call={statistics.median(times):.1f}")
