"""Code made by compile() in a loop, each code object freed before the next is made (the
allocator then gives the next one the same addresses): every generation's allocation, of
its own size, must be named after its own generated file. Prints how many are.

    LD_PRELOAD=libcumemtrace.so CUMEMTRACE_OUTPUT=t.cmt python3 exec_reuse.py LIBCUDART [N=300]
    python3 exec_reuse.py --check REPORT.json      (cumemtrace report --json --top 1000 t.cmt)
"""
import ctypes
import json
import sys


def check(path):
    right = wrong = without = 0
    for group in json.load(open(path))["leaks"]:
        for site in group["call_sites"]:
            want = f"gen_{site['bytes'] // site['count'] // 4096 - 1}.py"
            files = [f["file"] for f in site["python_frames"]]
            for _ in range(site["count"]):
                if not files:
                    without += 1
                elif want in files:
                    right += 1
                else:
                    wrong += 1
    print(f"named right {right}, wrong {wrong}, without Python frames {without}")


def run(runtime, n):
    rt = ctypes.CDLL(runtime)
    kept = []

    def alloc(size):
        p = ctypes.c_void_p()
        assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(size)) == 0
        kept.append(p)

    for i in range(n):
        code = compile(f"alloc({(i + 1) * 4096})\n", f"gen_{i}.py", "exec")
        exec(code, {"alloc": alloc})
        del code


if sys.argv[1] == "--check":
    check(sys.argv[2])
else:
    run(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 300)
