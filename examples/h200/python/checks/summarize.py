#!/usr/bin/env python3
"""Writes OUT/summary.json and OUT/summary.md from what validate.sh left in its scratch folder.

usage: summarize.py --work WORK --out OUT

Reads (each may be missing: the summary then says so, it never guesses a number):
  steps.tsv            name, status (exit status, "timeout", "skipped"), seconds per step
  gpu.csv              nvidia-smi: index, name, driver, memory total, memory used
  check_static.json    check_programs.py static
  check_oom.json       check_programs.py oom
  check_pytorch.json   check_pytorch.py
  alloc-{plain,depth0,depth32}.jsonl   alloc_loop output
  train.jsonl          train.py logs of every run (start / step / checkpoint / end lines)
Standard library only.
"""
import argparse
import datetime
import json
import os
import statistics
import sys

VARIANTS = ("plain", "depth0", "depth32")
SIZES = {512: "512 B", 2 * 1024 * 1024: "2 MiB"}


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        return {"status": "missing", "message": f"{os.path.basename(path)}: {e}"}


def load_lines(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        out.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass
    except OSError:
        pass
    return out


def ratio(a, b):
    return round(a / b, 3) if a is not None and b else None


def steps(work):
    rows = []
    try:
        with open(os.path.join(work, "steps.tsv")) as f:
            for line in f:
                w = line.rstrip("\n").split("\t")
                if len(w) == 3:
                    rows.append({"name": w[0], "status": w[1], "seconds": float(w[2])})
    except OSError:
        pass
    return rows


def alloc_overhead(work):
    # One line per size per round; a variant's figure is the median of its rounds' medians.
    got = {}
    for v in VARIANTS:
        for o in load_lines(os.path.join(work, f"alloc-{v}.jsonl")):
            got.setdefault(o.get("size"), {}).setdefault(v, []).append(o)
    out = {}
    for size, label in SIZES.items():
        row = {"size": size, "label": label}
        by = got.get(size, {})
        for v in VARIANTS:
            rounds = by.get(v, [])
            row[f"{v}_ns"] = statistics.median(o["median_ns_per_pair"] for o in rounds) if rounds else None
            row[f"{v}_round_medians_ns"] = [o["median_ns_per_pair"] for o in rounds] or None
        base = row["plain_ns"]
        for v in VARIANTS[1:]:
            row[f"{v}_ratio"] = ratio(row[f"{v}_ns"], base)
            row[f"{v}_added_ns"] = round(row[f"{v}_ns"] - base, 1) if row[f"{v}_ns"] is not None and base else None
        row["pairs"] = next((by[v][0]["pairs"] for v in VARIANTS if by.get(v)), None)
        row["reps"] = next((by[v][0]["reps"] for v in VARIANTS if by.get(v)), None)
        row["rounds"] = max((len(by.get(v, [])) for v in VARIANTS), default=0)
        out[label] = row
    return out


def train_runs(work):
    runs = {}
    for o in load_lines(os.path.join(work, "train.jsonl")):
        r = runs.setdefault(o.get("run", "?"), {"start": None, "end": None, "errors": [], "steps": 0})
        ev = o.get("event")
        if ev == "start":
            r["start"] = o
        elif ev == "end":
            r["end"] = o
        elif ev == "error":
            r["errors"].append(f"{o.get('where')}: {o.get('message')}")
        elif ev == "step":
            r["steps"] += 1
    return runs


def train_overhead(runs):
    ms = {name: (r["end"] or {}).get("mean_step_ms") for name, r in runs.items()}
    base = ms.get("default-untraced")
    return {
        "mean_step_ms": ms,
        "excluded_first_steps": next(((r["end"] or {}).get("warmup") for r in runs.values() if r["end"]), None),
        "traced_default_ratio": ratio(ms.get("default"), base),
        "traced_expandable_ratio": ratio(ms.get("expandable"), ms.get("expandable-untraced")),
        "traced_async_ratio": ratio(ms.get("async"), ms.get("async-untraced")),
        "record_history_ratio": ratio(ms.get("record-history"), base),
        "errors": {name: r["errors"] for name, r in runs.items() if r["errors"]},
    }


def verdict(obj):
    return (obj or {}).get("status", "missing")


def pytorch_section(cp):
    out = {}
    for r in cp.get("runs", []) if isinstance(cp, dict) else []:
        if r.get("status") == "not-traced":
            continue
        out[r["run"]] = {
            "mode": r.get("mode"), "status": r.get("status"), "message": r.get("message"),
            "prediction": r.get("prediction"), "checked": r.get("checked"), "equal_at": r.get("equal_at"),
            "max_abs_diff": r.get("max_abs_diff"), "worst_checkpoint": r.get("worst_checkpoint"),
            "segments_equal_at": r.get("segments_equal_at"),
            "other_libraries": r.get("other_libraries"),
            "rows": [{"label": c["label"], "pytorch": c["pytorch"], "tracked": c["tracked"], "diff": c["diff"],
                      "memory_reserved": c.get("memory_reserved"), "memory_allocated": c.get("memory_allocated"),
                      "cuda_used_minus_tracked": c.get("used_minus_tracked"),
                      "pool_reserve_minus_tracked": (c.get("pool_reserve") or {}).get("reserve_minus_tracked"),
                      "explanation": c.get("explanation")} for c in r.get("checkpoints", [])],
        }
    return out


def fmt(n, unit=""):
    if n is None:
        return "n/a"
    if isinstance(n, float):
        return f"{n:,.1f}{unit}"
    return f"{n:,}{unit}"


def fmt_ratio(r):
    return "n/a" if r is None else f"{r:.3f}"


def write_md(s, path):
    L = []
    p = L.append
    p("# cumemtrace validation")
    p("")
    p(f"Generated {s['generated_at']}. GPU: {', '.join(s['gpu']) or 'n/a'}. "
      f"PyTorch {s['torch'].get('torch') or 'n/a'} (CUDA {s['torch'].get('cuda') or 'n/a'}) on "
      f"{s['torch'].get('device_name') or 'n/a'}. Steps took {fmt(s['total_step_seconds'])} s.")
    p("")
    p("## Verdicts")
    p("")
    p("| check | result | detail |")
    p("|---|---|---|")
    st = s["static_runtime"]
    p(f"| every runtime entry point, static cudart, seen exactly once | {verdict(st)} | "
      f"{sum(c['ok'] for c in st.get('checks', []))}/{len(st.get('checks', []))} checks ok; "
      f"{len(st.get('extra_trace_allocations', []) or [])} allocations the program did not make |")
    oom = s["oom"]
    p(f"| OOM explained (size, stack, live bytes, NVML) | {verdict(oom)} | "
      f"{sum(c['ok'] for c in oom.get('checks', []))}/{len(oom.get('checks', []))} checks ok |")
    for run, r in s["pytorch"].items():
        if not r.get("prediction"):  # an untraced run that failed early: its error is under Overhead
            continue
        detail = r.get("message") or (f"equal at {r.get('equal_at')}/{r.get('checked')} checkpoints; "
                                      f"largest difference {fmt(r.get('max_abs_diff'))} B")
        p(f"| PyTorch `{run}`: {r.get('prediction') or ''} | {r.get('status')} | {detail} |")
    if not s["pytorch"]:
        p("| PyTorch comparisons | missing | check_pytorch.py produced nothing |")
    p("")

    for run, r in s["pytorch"].items():
        if not r.get("prediction"):
            continue
        p(f"## PyTorch, {run} allocator")
        p("")
        p(f"Expectation: {r.get('prediction')}.")
        p("")
        if not r["rows"]:
            p(f"Not checked: {r.get('message')}")
            p("")
            continue
        extra = {"default": "", "expandable": "", "async": " reserved − tracked (pool slack) |"}.get(r["mode"], "")
        p("| checkpoint | PyTorch (B) | tracked (B) | tracked − PyTorch (B) | CUDA used − tracked (B) |" + extra)
        p("|---|---:|---:|---:|---:|" + ("---:|" if extra else ""))
        for c in r["rows"]:
            line = (f"| {c['label']} | {fmt(c['pytorch'])} | {fmt(c['tracked'])} | {fmt(c['diff'])} | "
                    f"{fmt(c['cuda_used_minus_tracked'])} |")
            if extra:
                line += f" {fmt(c['pool_reserve_minus_tracked'])} |"
            p(line)
        p("")
        if r.get("segments_equal_at") is not None:
            p(f"Segment count (libc10_cuda.so allocations vs `segment.all.current`) equal at "
              f"{r['segments_equal_at']}/{r['checked']} checkpoints.")
            p("")
        bad = [c for c in r["rows"] if c["diff"]]
        for c in bad:
            p(f"- {c['label']}: {c['explanation']}")
        if bad:
            p("")
        libs = r.get("other_libraries") or {}
        if libs:
            p("Device memory not made through PyTorch's allocator (largest at any checkpoint): " +
              "; ".join(f"`{lib}` {fmt(o['max_bytes'])} B in {o['count']} at {o['at']}"
                        for lib, o in sorted(libs.items(), key=lambda kv: -kv[1]["max_bytes"])) + ".")
        else:
            p("No device memory from any other library.")
        p("")

    p("## Overhead")
    p("")
    p("cudaMalloc + cudaFree pairs, median ns per pair (512 B inside an already-held 2 MiB page):")
    p("")
    p("| size | plain | traced, depth 0 | ratio | added | traced, 32 frames | ratio | added |")
    p("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, row in s["overhead"]["alloc_loop"].items():
        p(f"| {label} | {fmt(row['plain_ns'])} | {fmt(row['depth0_ns'])} | {fmt_ratio(row['depth0_ratio'])} | "
          f"{fmt(row['depth0_added_ns'])} | {fmt(row['depth32_ns'])} | {fmt_ratio(row['depth32_ratio'])} | "
          f"{fmt(row['depth32_added_ns'])} |")
    p("")
    t = s["overhead"]["train"]
    ms = t["mean_step_ms"]
    p(f"Training step, mean ms excluding the first {fmt(t['excluded_first_steps'])} steps:")
    p("")
    p("| run | mean step (ms) | vs the same allocator untraced |")
    p("|---|---:|---:|")
    for run in ("default-untraced", "default", "expandable-untraced", "expandable", "async-untraced", "async",
                "record-history"):
        base = ms.get(run.split("-")[0] + "-untraced") if run != "record-history" else ms.get("default-untraced")
        if run in t["errors"]:
            p(f"| {run} | error: {'; '.join(t['errors'][run])[:200]} | |")
        elif run in ms:
            p(f"| {run} | {fmt(ms[run])} | {fmt_ratio(ratio(ms[run], base))} |")
    p("")
    p("(`record-history` is PyTorch's own `_record_memory_history(stacks='all')`, untraced, against the"
      " default allocator untraced.)")
    p("")
    p("## Steps")
    p("")
    p("| step | status | seconds |")
    p("|---|---|---:|")
    for r in s["steps"]:
        p(f"| {r['name']} | {r['status']} | {r['seconds']:.1f} |")
    p("")
    with open(path, "w") as f:
        f.write("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    gpu = []
    try:
        with open(os.path.join(a.work, "gpu.csv")) as f:
            gpu = [line.strip() for line in f if line.strip()]
    except OSError:
        pass
    runs = train_runs(a.work)
    start = next((r["start"] for r in runs.values() if r["start"]), None) or {}
    st = steps(a.work)
    s = {
        "format": "cumemtrace-validation",
        "schema_version": 1,
        "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": gpu,
        "torch": {k: start.get(k) for k in ("torch", "cuda", "device_name", "config")},
        "total_step_seconds": round(sum(r["seconds"] for r in st), 1),
        "steps": st,
        "static_runtime": load_json(os.path.join(a.work, "check_static.json")),
        "oom": load_json(os.path.join(a.work, "check_oom.json")),
        "pytorch": pytorch_section(load_json(os.path.join(a.work, "check_pytorch.json"))),
        "overhead": {"alloc_loop": alloc_overhead(a.work), "train": train_overhead(runs)},
    }
    # The oom check keeps the whole report entry; the summary wants only the figures.
    for f in s["oom"].get("failed_allocations", []) or []:
        f.pop("frames", None)
    s["verdicts"] = {
        "static_runtime": verdict(s["static_runtime"]),
        "oom": verdict(s["oom"]),
        **{f"pytorch_{run}": r.get("status") for run, r in s["pytorch"].items()},
    }
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(s, f, indent=1)
    write_md(s, os.path.join(a.out, "summary.md"))
    print(json.dumps(s["verdicts"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
