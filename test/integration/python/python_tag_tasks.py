"""cumemtrace.tag as a context manager around awaits, in asyncio tasks interleaved on one
thread, around allocations through the simulated runtime:
  1 MiB before any tag (the trace begins); then tag "run" around asyncio.run(main()),
  main gathers three tasks:
  a: with tag "a": 1 MiB, awaits asyncio.sleep(0), 2 MiB;
  b: with tag "b": 8 MiB, awaits, 16 MiB; then 32 MiB after its tag;
  c: no tag of its own, 64 MiB.
The tasks run a1, b1, c, a2, b2: each task's tag counts its own task's allocations only, and
"run" (opened in the context the loop runs in, which each task's context is entered from)
all six: a 3 MiB, b 24 MiB, run 123 MiB. Tags per thread (CUMEMTRACE_PYTHON=0) gave a
91 MiB (a1, b1, c, a2, b2) and b 74 MiB (b1, c, a2): a's exit closed b's tag, b's a's.
Without the tracer the tags do nothing."""
import asyncio
import ctypes
import sys

sys.path.insert(0, sys.argv[2])
import cumemtrace  # noqa: E402

rt = ctypes.CDLL(sys.argv[1])
kept = []
MiB = 1 << 20


def malloc(size):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(size)) == 0
    kept.append(p)


async def a():
    with cumemtrace.tag("a"):
        malloc(MiB)
        await asyncio.sleep(0)
        malloc(2 * MiB)
    return "a"


async def b():
    with cumemtrace.tag("b"):
        malloc(8 * MiB)
        await asyncio.sleep(0)
        malloc(16 * MiB)
    malloc(32 * MiB)
    return "b"


async def c():
    malloc(64 * MiB)
    return "c"


async def main():
    return await asyncio.gather(a(), b(), c())


malloc(MiB)  # the trace begins here
with cumemtrace.tag("run"):
    print(asyncio.run(main()))
