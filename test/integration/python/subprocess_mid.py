"""CPython's subprocess (vfork + exec where it can) in the middle of a traced program:
allocates through the simulated runtime with ctypes, runs /bin/true, allocates five
more times and frees the first. Prints what it did."""
import ctypes
import subprocess
import sys

rt = ctypes.CDLL(sys.argv[1])
first = ctypes.c_void_p()
assert rt.cudaMalloc(ctypes.byref(first), ctypes.c_size_t(1 << 20)) == 0
done = subprocess.run(["/bin/true"], check=False)
for _ in range(5):
    p = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(2 << 20)) == 0
assert rt.cudaFree(first) == 0
print(f"subprocess: child exited {done.returncode}, 6 allocations, 1 free")
