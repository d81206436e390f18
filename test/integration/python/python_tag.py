"""cumemtrace.tag from Python (the repo's package, ctypes onto the library), as a context
manager and as a decorator, around allocations through the simulated runtime:
1 MiB before any tag; tag "load": 4 MiB, then step(); step() once more; step() tags
"step" and keeps 2 MiB. Without the tracer the tags do nothing."""
import ctypes
import sys

sys.path.insert(0, sys.argv[2])
import cumemtrace  # noqa: E402

rt = ctypes.CDLL(sys.argv[1])
kept = []


def malloc(size):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(size)) == 0
    kept.append(p)


@cumemtrace.tag("step")
def step():
    malloc(2 << 20)


malloc(1 << 20)  # the trace begins here
with cumemtrace.tag("load"):
    malloc(4 << 20)
    step()
step()
print("ok")
