#!/usr/bin/env bash
# Tags that follow Python contexts under PyTorch (docs/cli.md, 'Memory per range'): two
# asyncio tasks on one thread, each 'with cumemtrace.tag(X)' around an allocation, an
# await and another, interleaved a1 (2 MiB), b1 (16 MiB), a2 (4 MiB), b2 (32 MiB).
# Expected, by hand: following contexts (3.11-3.13) a 6 MiB, b 48 MiB; tags per thread
# (CUMEMTRACE_PYTHON=0, or a version without contexts) a 54 MiB, b 20 MiB (a opens, b nests
# in it, a's exit closes b's tag, so b2 counts to a). Caching off, so that each tensor is
# one cudaMalloc of its size. Under a minute.
#   examples/h200/proofs/tag_contexts.sh OUTDIR    (env: CUMEMTRACE, CUMEMTRACE_LIBRARY, PYTHON)
. "$(dirname "$0")/../proof_setup.sh" tag_contexts "$@"
export CUMEMTRACE_LIBRARY=${CUMEMTRACE_LIBRARY:-$top/build/lib/libcumemtrace.so}
export PYTHONPATH=$top/python${PYTHONPATH:+:$PYTHONPATH} PYTORCH_NO_CUDA_MEMORY_CACHING=1
# First the offsets themselves, read with ctypes in the interpreter (python_layout.cpp):
# PyThreadState.context is the Context that Context.run entered, its ctx_prev the one before.
"$PY" - >>"$LOG" 2>&1 <<'PY'
import contextvars, ctypes, sys
ctypes.pythonapi.PyThreadState_Get.restype = ctypes.c_void_p
ts = ctypes.pythonapi.PyThreadState_Get()
word = lambda a: ctypes.c_uint64.from_address(a).value
off = {0x030B: 224, 0x030C: 208, 0x030D: 208}[sys.hexversion >> 16]
outer, inner = contextvars.Context(), contextvars.Context()
got = outer.run(lambda: (word(ts + off), inner.run(lambda: (word(ts + off), word(word(ts + off) + 16)))))
print(sys.version.split()[0], "context at", off, ":", got == (id(outer), (id(inner), id(outer))), "(expected True)")
PY
cat >"$WORK/tasks.py" <<'PY'
import asyncio
import torch
import cumemtrace

MiB = 1 << 20
kept = []


def alloc(mib):
    kept.append(torch.empty(mib * MiB, dtype=torch.uint8, device="cuda"))


async def task(name, first, second):
    with cumemtrace.tag(name):
        alloc(first)
        await asyncio.sleep(0)
        alloc(second)


async def main():
    await asyncio.gather(task("a", 2, 4), task("b", 16, 32))


alloc(1)  # the context is made and the trace begins outside every tag
asyncio.run(main())
PY
for mode in contexts thread; do
  py=1; [[ $mode == thread ]] && py=0
  CUMEMTRACE_PYTHON=$py timeout 50 "$CLI" run -o "$WORK/$mode-%p.trace" -- "$PY" "$WORK/tasks.py" >>"$LOG" 2>&1
  echo "== $mode: run exit $?" >>"$LOG"
  "$CLI" report --by range --json "$WORK/$mode"-*.trace >"$OUT/$mode.json" 2>>"$LOG"
  "$PY" - "$OUT/$mode.json" "$mode" >>"$LOG" 2>&1 <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
rows = report["traces"][0]["by_range"] if "traces" in report else report["by_range"]
got = {r["name"]: r["bytes_allocated"] / (1 << 20) for r in rows if r["kind"] == "tag"}
expected = {"contexts": {"a": 6, "b": 48}, "thread": {"a": 54, "b": 20}}[sys.argv[2]]
for name, mib in expected.items():
    print(f"{sys.argv[2]}: tag {name}: {got.get(name)} MiB, expected {mib} MiB:", "ok" if got.get(name) == mib else "DIFFERS")
PY
done
cat "$LOG"
