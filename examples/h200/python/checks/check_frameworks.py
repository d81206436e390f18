#!/usr/bin/env python3
"""Compares what CuPy and JAX say they hold with what cumemtrace saw (frameworks.py).

CuPy: its memory pool's total_bytes() is what it got from cudaMalloc, so it should
equal the tracked live device bytes at each checkpoint. JAX (XLA) preallocates most of
the GPU at start-up through the driver; the trace shows that allocation and who made it.
Prints a table; the exact figures go to the validation summary by hand.

usage: check_frameworks.py --cli CUMEMTRACE --log LOG --trace-glob 'work/fw-{mode}-*.trace'
"""
import argparse
import glob
import json
import subprocess


def live(cli, trace, times):
    out = subprocess.run([cli, "live", "--json", trace, "--at", ",".join(str(t) for t in times)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--trace-glob", required=True)
    a = ap.parse_args()
    lines = [json.loads(l) for l in open(a.log) if l.strip()]
    ok = True
    for mode in ("cupy", "jax"):
        rows = [l for l in lines if l.get("framework") == mode]
        traces = sorted(glob.glob(a.trace_glob.format(mode=mode)))
        print(f"== {mode}: {len(rows)} checkpoints, traces {traces}")
        errors = [r["error"] for r in rows if r.get("checkpoint") == "error"]
        if errors or not traces or not rows:
            print(f"   not checked: {errors or 'no trace or no checkpoint'}")
            ok = False
            continue
        results = live(a.cli, traces[-1], [r["t_ns"] for r in rows])
        for r, l in zip(rows, results):
            d0 = next((d for d in l["devices"] if d["device"] == 0), None)
            tracked = d0["device_bytes"] if d0 else 0
            libs = ", ".join(f"{x['library']} {x['bytes']:,}" for x in (d0 or {}).get("bytes_by_library", []))
            if mode == "cupy":
                same = tracked == r["pool_total"]
                ok &= same
                print(f"   {r['checkpoint']:8} pool total {r['pool_total']:>14,}  tracked {tracked:>14,}  "
                      f"{'equal' if same else 'DIFFERENT by ' + format(tracked - r['pool_total'], ',')}  [{libs}]")
            else:
                s = r.get("stats", {})
                print(f"   {r['checkpoint']:8} tracked {tracked:>16,}  JAX bytes_reserved {s.get('bytes_reserved', 0):>16,}"
                      f"  bytes_in_use {s.get('bytes_in_use', 0):>14,}  pool_bytes {s.get('pool_bytes', 0):>16,}  [{libs}]")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
