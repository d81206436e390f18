"""Checks a `cumemtrace export --format memviz` snapshot with PyTorch's own memory_viz
(issue 11 §2). Run on the GPU machine, where torch is installed:

    cumemtrace run -o 'memviz-%p.trace' -- python3 examples/h200/python/workloads/python_frames.py
    cumemtrace export --format memviz memviz-*.trace -o snap.pickle
    python3 examples/h200/python/checks/memviz_check.py snap.pickle [OUTDIR]

It (1) checks the first bytes are a protocol-4 pickle (the web viewer rejects 5),
(2) replays the "Allocator State History" view's undo from the end state, as
MemoryViz.js does, and fails if a block would lie outside every segment (the view
goes blank then), (3) renders trace_plot and segment_plot with torch.cuda._memory_viz
into OUTDIR (default .) and runs its text summaries (segsum, trace). Prints one line per
check and exits 1 on the first failure.
"""
import os
import pickle
import sys

from torch.cuda import _memory_viz as mv

# The same undo of the history view that the unit tests run (test/analysis/memviz_load.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "test", "analysis"))
from memviz_load import history_errors  # noqa: E402


def fail(msg):
    print("FAIL", msg)
    sys.exit(1)


def check_history(snapshot):
    errors = history_errors(snapshot)
    for e in errors[:20]:
        print("FAIL", e)
    if errors:
        sys.exit(1)
    print(f"ok {len(snapshot['device_traces'])} devices: every event undone, every block inside a segment")


def main():
    path = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else "."
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] != b"\x80\x04":
        fail(f"first bytes {data[:2]!r}, not a protocol-4 pickle")
    print("ok protocol 4")
    snapshot = pickle.loads(data)
    n = sum(len(t) for t in snapshot["device_traces"])
    print(f"ok loaded: {len(snapshot['segments'])} segments, {n} trace entries")
    check_history(snapshot)
    os.makedirs(out, exist_ok=True)
    for name, fn in (("trace_plot", mv.trace_plot), ("segment_plot", mv.segment_plot)):
        html = fn(snapshot)
        with open(os.path.join(out, name + ".html"), "w") as f:
            f.write(html)
        print(f"ok {name}: {len(html)} bytes of HTML in {out}/{name}.html")
    print("ok segsum:", mv.segsum(snapshot).splitlines()[0] if snapshot["segments"] else "(no segments)")
    print("ok trace:", len(mv.trace(snapshot).splitlines()), "lines")


if __name__ == "__main__":
    main()
