"""cumemtrace.mark from Python (the repo's package, ctypes onto the library): three marks
"step" around allocations through the simulated runtime. Prints whether each was
recorded (False before the first CUDA call: there is no trace yet)."""
import ctypes
import sys

sys.path.insert(0, sys.argv[2])
import cumemtrace  # noqa: E402

rt = ctypes.CDLL(sys.argv[1])
early = cumemtrace.mark("before-cuda")
recorded = []
for _ in range(3):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)) == 0
    recorded.append(cumemtrace.mark("step"))
print(f"early {early}, steps {recorded}")
