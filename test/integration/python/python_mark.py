"""cumemtrace.mark from Python (the repo's package, ctypes onto the library): a mark
"before-cuda" and a tag "loading" opened before the first CUDA call (kept for the trace's
start), then three marks "step" around 1 MiB allocations through the simulated runtime,
inside the tag. Prints whether each mark was recorded."""
import ctypes
import sys

sys.path.insert(0, sys.argv[2])
import cumemtrace  # noqa: E402

rt = ctypes.CDLL(sys.argv[1])
early = cumemtrace.mark("before-cuda")
recorded = []
with cumemtrace.tag("loading"):
    for _ in range(3):
        p = ctypes.c_void_p()
        assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)) == 0
        recorded.append(cumemtrace.mark("step"))
print(f"early {early}, steps {recorded}")
