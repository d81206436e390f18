"""@cumemtrace.tag on a generator function and on two async defs run as interleaved asyncio
tasks on one thread, around allocations through the simulated runtime:
  1 MiB before any tag (the trace begins); gen() allocates 1 MiB, yields, 2 MiB, yields,
  ends (3 steps), and the loop over it allocates 4 MiB at each of its 2 yields (not gen's);
  a() allocates 1 MiB, awaits asyncio.sleep(0), 1 MiB (2 steps); b() 8 MiB, awaits, 8 MiB.
The tasks run a1, b1, a2, b2: each step is tagged alone, so gen has 3 MiB, a 2 MiB and b
16 MiB (a decorator that tagged only the call making the generator or coroutine gave each
0 B). Without the tracer the tags do nothing and the functions work the same."""
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


@cumemtrace.tag("gen")
def gen():
    malloc(MiB)
    yield 1
    malloc(2 * MiB)
    yield 2
    return 3


@cumemtrace.tag("a")
async def a():
    malloc(MiB)
    await asyncio.sleep(0)
    malloc(MiB)
    return "a"


@cumemtrace.tag("b")
async def b():
    malloc(8 * MiB)
    await asyncio.sleep(0)
    malloc(8 * MiB)
    return "b"


async def both():
    return await asyncio.gather(a(), b())


malloc(MiB)  # the trace begins here
got = []
for v in gen():
    got.append(v)
    malloc(4 * MiB)
print(got, asyncio.run(both()))
