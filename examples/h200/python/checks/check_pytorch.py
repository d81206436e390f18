#!/usr/bin/env python3
"""Compares what PyTorch says it holds with what cumemtrace tracked, checkpoint by checkpoint.

usage: check_pytorch.py --cli CUMEMTRACE --trace-pattern PATTERN [--json-out FILE] LOG...

LOG: JSON Lines written by train.py (several runs may share a file; runs are told apart by
their "run" field). A run is checked when PATTERN, formatted with {run}, {mode} and {pid}
from its start line, names an existing trace; other runs are listed as not traced.

For each checked run, `cumemtrace live TRACE --at T1,T2,... --json` gives the tracked state
at every checkpoint (T = time.monotonic_ns() right after torch.cuda.synchronize(); both
sides use CLOCK_MONOTONIC). The expectation to test, per allocator mode:

  default     live bytes made from libc10_cuda.so (cudaMalloc, kind `device`)
              == torch.cuda.memory_reserved(); their count == segment.all.current
  expandable  live `vmm-map` bytes == torch.cuda.memory_reserved()
  async       live `async-pool` bytes == torch.cuda.memory_allocated(); and
              memory_reserved() (the pool's reserve, which no hooked call shows) is
              reported beside the tracked bytes

A difference is printed in bytes, with the libraries holding device memory at that
moment, so the reason can be read off (a library whose bytes equal the difference is
named). Everything not made through PyTorch's allocator (any library but libc10_cuda) is
listed per library. Nothing here assumes the expectation holds.

Standard library only. Exit status: 0 when every predicted equality held at every
checkpoint of every checked run, 1 when one did not, 2 when a run could not be checked.
"""
import argparse
import json
import os
import subprocess
import sys

C10 = "libc10_cuda"

PREDICTIONS = {
    "default": "live bytes made from libc10_cuda.so (kind `device`) == torch.cuda.memory_reserved()",
    "expandable": "live `vmm-map` bytes (all libraries) == torch.cuda.memory_reserved()",
    "async": "live `async-pool` bytes (all libraries) == torch.cuda.memory_allocated()",
}


def mib(n):
    return f"{n / 2**20:,.2f} MiB"


def exact(n):
    return f"{n:,}"


def signed(n):
    return f"{n:+,}"


def read_runs(paths):
    """{run: {"start": {...}, "checkpoints": [...], "end": {...} or None, "errors": [...]}}"""
    runs = {}
    for path in paths:
        with open(path) as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    o = json.loads(line)
                except json.JSONDecodeError as e:
                    print(f"check_pytorch: {path}:{n}: not JSON ({e}); line skipped", file=sys.stderr)
                    continue
                r = runs.setdefault(o.get("run", "?"), {"start": None, "checkpoints": [], "end": None, "errors": []})
                ev = o.get("event")
                if ev == "start":
                    r["start"] = o
                elif ev == "checkpoint":
                    r["checkpoints"].append(o)
                elif ev == "end":
                    r["end"] = o
                elif ev == "error":
                    r["errors"].append(o)
    return runs


def call_live(cli, trace, times):
    cmd = [cli, "live", trace, "--at", ",".join(str(t) for t in times), "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} ... exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    if p.stderr.strip():
        print(f"check_pytorch: cumemtrace live said: {p.stderr.strip()[-2000:]}", file=sys.stderr)
    out = json.loads(p.stdout)
    if not isinstance(out, list) or len(out) != len(times):
        raise RuntimeError(f"live --json gave {type(out).__name__} of {len(out) if isinstance(out, list) else '?'}"
                           f" entries for {len(times)} times")
    return out


def library_rows(dev):
    """[(library, kind or None, bytes, count)] from bytes_by_library.

    Today's rows are {library, bytes, count} summed over the kinds holding device memory
    (kind None). A row that carries a "kind" field, or a "live_bytes" object keyed by
    kind, is split by kind: the checker uses the finer figure when the CLI gives it."""
    rows = []
    for r in dev.get("bytes_by_library", []):
        lib = r.get("library", "?")
        if isinstance(r.get("live_bytes"), dict):
            counts = r.get("live_count", {}) if isinstance(r.get("live_count"), dict) else {}
            for kind, b in r["live_bytes"].items():
                if b:
                    rows.append((lib, kind, b, counts.get(kind, 0)))
        else:
            rows.append((lib, r.get("kind"), r.get("bytes", 0), r.get("count", 0)))
    return rows


def figures(dev):
    """What one checkpoint's device entry says, reduced to what the comparisons need."""
    lb = dev.get("live_bytes", {})
    lc = dev.get("live_count", {})
    rows = library_rows(dev)
    split = any(k is not None for _, k, _, _ in rows)
    c10 = [(k, b, c) for lib, k, b, c in rows if lib.startswith(C10)]
    others = {}
    for lib, k, b, c in rows:
        if lib.startswith(C10):
            continue
        o = others.setdefault(lib, {"bytes": 0, "count": 0, "kinds": {}})
        o["bytes"] += b
        o["count"] += c
        if k:
            o["kinds"][k] = o["kinds"].get(k, 0) + b
    return {
        "device_bytes": dev.get("device_bytes", 0),
        "live_bytes": {k: v for k, v in lb.items() if v},
        "live_count": {k: v for k, v in lc.items() if v},
        "c10_bytes": sum(b for _, b, _ in c10),
        "c10_count": sum(c for _, _, c in c10),
        # None when the CLI does not split libraries by kind.
        "c10_device_bytes": sum(b for k, b, _ in c10 if k == "device") if split else None,
        "c10_device_count": sum(c for k, _, c in c10 if k == "device") if split else None,
        "c10_kinds": {k: b for k, b, _ in c10 if k} if split else None,
        "library_split_by_kind": split,
        "others": others,
    }


def find_device(entry, index):
    for d in entry.get("devices", []):
        if d.get("device") == index:
            return d
    return {}  # nothing happened on that device yet: all zeros


def explain(diff, fig, mode):
    """Words for a non-zero difference (tracked - PyTorch): who holds what."""
    words = []
    same = [lib for lib, o in fig["others"].items() if o["bytes"] == abs(diff)]
    if same:
        words.append(f"{', '.join(same)} holds exactly |diff| = {exact(abs(diff))} B")
    if mode == "default":
        dev_all = fig["live_bytes"].get("device", 0)
        words.append(f"libc10_cuda.so holds {exact(fig['c10_bytes'])} B in {fig['c10_count']} allocations"
                     f" (kinds: {fig['c10_kinds'] if fig['c10_kinds'] is not None else 'not split by the CLI'});"
                     f" `device` bytes of all libraries {exact(dev_all)} B")
    elif mode == "expandable":
        words.append(f"vmm-map {exact(fig['live_bytes'].get('vmm-map', 0))} B in "
                     f"{fig['live_count'].get('vmm-map', 0)} mappings, vmm-physical "
                     f"{exact(fig['live_bytes'].get('vmm-physical', 0))} B in "
                     f"{fig['live_count'].get('vmm-physical', 0)} handles; libc10_cuda.so holds "
                     f"{exact(fig['c10_bytes'])} B of device-holding kinds")
    elif mode == "async":
        n = fig["live_count"].get("async-pool", 0)
        words.append(f"{n} live async-pool blocks; libc10_cuda.so holds {exact(fig['c10_bytes'])} B")
        if diff < 0 and n:
            # To test, not assume: if PyTorch reads the pool's used-memory attribute, the
            # driver's rounding of each block shows here as < 512 B per block.
            words.append(f"PyTorch counts {exact(-diff)} B more than the requested sizes the trace holds ="
                         f" {-diff / n:,.1f} B per live block (per-block rounding to 512 B would explain"
                         f" at most 511 B per block)")
    if fig["others"]:
        words.append("other libraries: " + "; ".join(
            f"{lib} {exact(o['bytes'])} B ({o['count']})" for lib, o in sorted(fig["others"].items())))
    else:
        words.append("no other library holds device memory")
    return "; ".join(words)


def check_run(name, run, cli, pattern):
    start = run["start"] or {}
    mode = start.get("mode", name)
    res = {"run": name, "mode": mode, "pid": start.get("pid"), "prediction": PREDICTIONS.get(mode),
           "status": "error", "checkpoints": [], "message": None}
    if not start:
        errs = "; ".join(f"{e.get('where')}: {e.get('message')}" for e in run["errors"])
        res["message"] = f"the run failed before its start line: {errs}" if errs else "no start line in the log"
        return res
    trace = pattern.format(run=name, mode=mode, pid=start.get("pid"))
    res["trace"] = trace
    if not os.path.exists(trace):
        res["status"] = "not-traced"
        res["message"] = f"no trace at {trace}"
        return res
    if not run["checkpoints"]:
        res["message"] = "no checkpoints in the log: " + "; ".join(e.get("message", "") for e in run["errors"])
        return res
    if mode not in PREDICTIONS:
        res["message"] = f"unknown mode {mode!r}"
        return res
    try:
        lives = call_live(cli, trace, [c["t_ns"] for c in run["checkpoints"]])
    except Exception as e:
        res["message"] = str(e)
        return res

    index = start.get("device_index", 0)
    for cp, live in zip(run["checkpoints"], lives):
        fig = figures(find_device(live, index))
        stats = cp.get("stats", {}) or {}
        info = cp.get("mem_get_info", {}) or {}
        used = info["total"] - info["free"] if "total" in info and "free" in info else None
        row = {"label": cp["label"], "step": cp.get("step"), "t_ns": cp["t_ns"],
               "events_applied": live.get("events_applied"),
               "memory_reserved": cp.get("memory_reserved"), "memory_allocated": cp.get("memory_allocated"),
               "cuda_used": used, "tracked_device_bytes": fig["device_bytes"],
               "used_minus_tracked": used - fig["device_bytes"] if used is not None else None,
               "figures": fig}
        if mode == "default":
            row["pytorch"] = cp.get("memory_reserved")
            exact_split = fig["c10_device_bytes"] is not None
            row["tracked"] = fig["c10_device_bytes"] if exact_split else fig["c10_bytes"]
            row["tracked_is"] = ("libc10_cuda.so `device` bytes" if exact_split else
                                 "libc10_cuda.so bytes of all device-holding kinds (CLI gives no per-kind split)")
            seg = stats.get("segment.all.current")
            cnt = fig["c10_device_count"] if exact_split else fig["c10_count"]
            row["segments"] = {"pytorch": seg, "tracked": cnt, "equal": seg == cnt if seg is not None else None}
        elif mode == "expandable":
            row["pytorch"] = cp.get("memory_reserved")
            row["tracked"] = fig["live_bytes"].get("vmm-map", 0)
            row["tracked_is"] = "live vmm-map bytes"
            row["vmm_physical"] = fig["live_bytes"].get("vmm-physical", 0)
        else:
            row["pytorch"] = cp.get("memory_allocated")
            row["tracked"] = fig["live_bytes"].get("async-pool", 0)
            row["tracked_is"] = "live async-pool bytes"
            reserve = cp.get("memory_reserved")
            row["pool_reserve"] = {"memory_reserved": reserve, "tracked_async_pool": row["tracked"],
                                   "reserve_minus_tracked": reserve - row["tracked"] if reserve is not None else None}
        row["diff"] = row["tracked"] - row["pytorch"] if row["pytorch"] is not None else None
        row["equal"] = row["diff"] == 0
        row["explanation"] = None if row["equal"] else explain(row["diff"] or 0, fig, mode)
        res["checkpoints"].append(row)

    rows = res["checkpoints"]
    bad = [r for r in rows if not r["equal"]]
    res["checked"] = len(rows)
    res["equal_at"] = len(rows) - len(bad)
    res["status"] = "pass" if not bad else "fail"
    if bad:
        worst = max(bad, key=lambda r: abs(r["diff"] or 0))
        res["max_abs_diff"] = abs(worst["diff"] or 0)
        res["worst_checkpoint"] = worst["label"]
    else:
        res["max_abs_diff"] = 0
    # Not through PyTorch's allocator: the most each other library held at any checkpoint.
    others = {}
    for r in rows:
        for lib, o in r["figures"]["others"].items():
            m = others.setdefault(lib, {"max_bytes": 0, "at": None, "count": 0})
            if o["bytes"] > m["max_bytes"]:
                m.update(max_bytes=o["bytes"], at=r["label"], count=o["count"])
    res["other_libraries"] = others
    if mode == "default":
        segs = [r["segments"]["equal"] for r in rows if r["segments"]["equal"] is not None]
        res["segments_equal_at"] = sum(segs)
    return res


def render(res, out):
    p = lambda s="": print(s, file=out)
    p(f"== {res['run']} (mode {res['mode']}, pid {res.get('pid')}) ==")
    p(f"trace: {res.get('trace', '-')}")
    if res["status"] in ("error", "not-traced"):
        p(f"{res['status'].upper()}: {res['message']}")
        p()
        return
    p(f"expectation: {res['prediction']}")
    if res["checkpoints"]:
        p(f"tracked figure: {res['checkpoints'][0]['tracked_is']}")
    head = f"{'checkpoint':<18} {'PyTorch':>16} {'tracked':>16} {'tracked-PyTorch':>16}  ok"
    extra = {"default": "  segments pt/tr", "expandable": "  vmm-physical", "async": "  reserved-tracked"}[res["mode"]]
    p(head + extra + f"  {'cuda used-tracked':>18}")
    for r in res["checkpoints"]:
        line = (f"{r['label']:<18} {exact(r['pytorch'] or 0):>16} {exact(r['tracked']):>16} "
                f"{signed(r['diff'] or 0):>16}  {'yes' if r['equal'] else 'NO '}")
        if res["mode"] == "default":
            s = r["segments"]
            line += f"  {s['pytorch']}/{s['tracked']}{'' if s['equal'] else ' (differ)'}"
        elif res["mode"] == "expandable":
            line += f"  {exact(r['vmm_physical'])}"
        else:
            d = r["pool_reserve"]["reserve_minus_tracked"]
            line += f"  {exact(d) if d is not None else '-'}"
        u = r["used_minus_tracked"]
        line += f"  {mib(u) if u is not None else '-':>18}"
        p(line)
    if res["status"] == "pass":
        p(f"RESULT: equal at all {res['checked']} checkpoints")
    else:
        p(f"RESULT: differs at {res['checked'] - res['equal_at']} of {res['checked']} checkpoints;"
          f" largest |tracked-PyTorch| = {exact(res['max_abs_diff'])} B ({mib(res['max_abs_diff'])})"
          f" at {res['worst_checkpoint']}")
        for r in res["checkpoints"]:
            if not r["equal"]:
                p(f"  {r['label']}: {signed(r['diff'] or 0)} B; {r['explanation']}")
    if res["mode"] == "default":
        p(f"segment count equal at {res['segments_equal_at']} of {res['checked']} checkpoints")
    if res["mode"] == "async":
        p("pool reserve: PyTorch's memory_reserved() is the pool's reserved memory (driver attribute);"
          " no hooked call shows it, so reserved-tracked above is pool slack invisible to the trace")
    if res["other_libraries"]:
        p("device memory NOT made through PyTorch's allocator (largest at any checkpoint):")
        for lib, o in sorted(res["other_libraries"].items(), key=lambda kv: -kv[1]["max_bytes"]):
            p(f"  {lib:<32} {exact(o['max_bytes']):>16} B ({mib(o['max_bytes'])}) in {o['count']} allocations, at {o['at']}")
    else:
        p("device memory NOT made through PyTorch's allocator: none")
    p()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True, help="the cumemtrace executable")
    ap.add_argument("--trace-pattern", required=True, help="e.g. 'work/train-{run}-{pid}.trace'")
    ap.add_argument("--json-out", help="write the results as JSON here")
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args()

    runs = read_runs([p for p in args.logs if os.path.exists(p)])
    missing = [p for p in args.logs if not os.path.exists(p)]
    results = []
    for name, run in runs.items():
        res = check_run(name, run, args.cli, args.trace_pattern)
        results.append(res)
        render(res, sys.stdout)
    for pth in missing:
        print(f"== {pth}: no such log ==\n", file=sys.stdout)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"runs": results, "missing_logs": missing}, f, indent=1)
    checked = [r for r in results if r["status"] in ("pass", "fail")]
    if any(r["status"] == "error" for r in results) or missing or not checked:
        return 2
    return 0 if all(r["status"] == "pass" for r in checked) else 1


if __name__ == "__main__":
    sys.exit(main())
