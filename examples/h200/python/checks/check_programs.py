#!/usr/bin/env python3
"""Checks the traces of the two CUDA C++ programs against what the programs say they did.

  check_programs.py static --cli CUMEMTRACE --trace T --program-out OUT [--json-out F]
      static_runtime (static cudart): every allocation it printed is seen exactly once,
      as the right kind and size; every free too; nothing of it is live at the end.
  check_programs.py oom --cli CUMEMTRACE --trace T --program-out OUT [--json-out F]
      oom: the failed request is in `report --json` with its size, a symbolized stack
      naming the program's functions, the tracked live bytes and NVML free/total.

What is compared, for `static` (stable interfaces first):
  1. `live --at <all-live>`: per kind, live count and bytes == the program's list
     (host-pinned is device -1; kinds summed over devices).
  2. `live --at <all-freed>`: none of the program's kinds is live any more.
  3. `report --json`: counts.anomalies == 0 and counts.unknown_frees == 0 on every device;
     counts.allocs summed == the program's allocations (a runtime hook and a driver hook
     both recording one cudaMalloc would show here, and in 1).
  4. Per address (from `cumemtrace dump`, whose format is unstable, so a parse failure is
     reported, not failed): each printed allocation is exactly one successful alloc event
     of that address, kind and size; the entry point the trace names is listed beside the
     runtime call (with static cudart it is the driver's: cudaMalloc -> cuMemAlloc_v2).
     Trace allocations the program did not print (the runtime's own) are listed.

Standard library only. Exit status 0 when every check passed, 1 when one failed, 2 when
the inputs were unusable.
"""
import argparse
import json
import re
import subprocess
import sys


def cli_json(cli, *args):
    p = subprocess.run([cli, *args], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"cumemtrace {' '.join(args[:2])} exited {p.returncode}: {p.stderr.strip()[-1500:]}")
    return json.loads(p.stdout)


def read_program(path):
    allocs, frees, checkpoints, other = [], [], {}, []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) == 5 and w[0] == "alloc":
                allocs.append({"api": w[1], "kind": w[2], "addr": int(w[3], 16), "bytes": int(w[4])})
            elif len(w) == 4 and w[0] == "free":
                frees.append({"api": w[1], "kind": w[2], "addr": int(w[3], 16)})
            elif len(w) == 3 and w[0] == "checkpoint":
                checkpoints[w[1]] = int(w[2])
            elif w:
                other.append(line.rstrip("\n"))
    return allocs, frees, checkpoints, other


EVENT = re.compile(r"event t=(\d+) (\S+) (\S+) dev=(-?\d+) addr=0x([0-9a-fA-F]+) size=(\d+) .*"
                   r"api=(\d+) result=(-?\d+) flags=(\d+)")
API = re.compile(r"api id=(\d+) (\S+)")


def read_dump(cli, trace):
    """Events from `cumemtrace dump` (unstable format: None when it cannot be parsed)."""
    p = subprocess.run([cli, "dump", trace], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return None, f"dump exited {p.returncode}"
    apis, events = {}, []
    for line in p.stdout.splitlines():
        m = API.search(line)
        if m and " api id=" in line:
            apis[int(m.group(1))] = m.group(2)
            continue
        m = EVENT.search(line)
        if m:
            events.append({"t": int(m.group(1)), "op": m.group(2), "kind": m.group(3), "device": int(m.group(4)),
                           "addr": int(m.group(5), 16), "size": int(m.group(6)), "api_id": int(m.group(7)),
                           "result": int(m.group(8)), "flags": int(m.group(9))})
    if not events:
        return None, "no event lines recognised in dump output"
    for e in events:
        e["api"] = apis.get(e["api_id"], f"api#{e['api_id']}")
    return events, None


def sum_kinds(live_entry, field):
    out = {}
    for d in live_entry.get("devices", []):
        for k, v in d.get(field, {}).items():
            out[k] = out.get(k, 0) + v
    return out


def check_static(args):
    allocs, frees, cps, other = read_program(args.program_out)
    res = {"program": "static_runtime", "checks": [], "allocations": len(allocs), "frees": len(frees)}

    def add(name, ok, detail):
        res["checks"].append({"name": name, "ok": ok, "detail": detail})

    if not allocs or "all-live" not in cps or "all-freed" not in cps:
        res["status"] = "error"
        res["message"] = "program output lacks allocations or checkpoints (did it run?)"
        return res

    want_count, want_bytes = {}, {}
    for a in allocs:
        want_count[a["kind"]] = want_count.get(a["kind"], 0) + 1
        want_bytes[a["kind"]] = want_bytes.get(a["kind"], 0) + a["bytes"]

    live = cli_json(args.cli, "live", args.trace, "--at", f"{cps['all-live']},{cps['all-freed']}", "--json")
    at_live, at_freed = live[0], live[1]
    got_count, got_bytes = sum_kinds(at_live, "live_count"), sum_kinds(at_live, "live_bytes")
    for kind in sorted(want_count):
        ok = got_count.get(kind, 0) == want_count[kind] and got_bytes.get(kind, 0) == want_bytes[kind]
        add(f"live at all-live: {kind}", ok,
            f"program {want_count[kind]} allocations / {want_bytes[kind]:,} B; "
            f"trace {got_count.get(kind, 0)} / {got_bytes.get(kind, 0):,} B")
    extra_kinds = {k: v for k, v in got_count.items() if v and k not in want_count}
    add("live at all-live: no other kinds", not extra_kinds, f"other kinds live: {extra_kinds or 'none'}")
    freed_count = sum_kinds(at_freed, "live_count")
    left = {k: freed_count.get(k, 0) for k in want_count if freed_count.get(k, 0)}
    add("live at all-freed: nothing of ours", not left, f"still live: {left or 'none'}")

    rep = cli_json(args.cli, "report", args.trace, "--json")
    devs = rep.get("devices", [])
    allocs_n = sum(d["counts"]["allocs"] for d in devs)
    frees_n = sum(d["counts"]["frees"] for d in devs)
    anomalies = sum(d["counts"]["anomalies"] for d in devs)
    unknown = sum(d["counts"]["unknown_frees"] for d in devs)
    failed = sum(d["counts"]["failed"] for d in devs)
    add("report: allocations counted once", allocs_n == len(allocs),
        f"counts.allocs summed over devices {allocs_n}, program {len(allocs)}")
    add("report: frees counted once", frees_n == len(frees), f"counts.frees {frees_n}, program {len(frees)}")
    add("report: no anomalies, unknown frees or failures", anomalies == 0 and unknown == 0 and failed == 0,
        f"anomalies {anomalies}, unknown_frees {unknown}, failed {failed}")
    add("report: trace complete, nothing dropped", rep["trace"]["complete"] and rep["trace"]["events_dropped"] == 0,
        f"complete {rep['trace']['complete']}, events_dropped {rep['trace']['events_dropped']}")
    res["report_counts"] = {"allocs": allocs_n, "frees": frees_n, "anomalies": anomalies,
                            "unknown_frees": unknown, "failed": failed}

    events, why = read_dump(args.cli, args.trace)
    per_address = []
    if events is None:
        res["dump"] = f"not used: {why}"
    else:
        ok_alloc = [e for e in events if e["op"] == "alloc" and e["result"] == 0]
        ok_free = [e for e in events if e["op"] == "free" and e["result"] == 0]
        mine = {a["addr"] for a in allocs}
        for a in allocs:
            seen = [e for e in ok_alloc if e["addr"] == a["addr"]]
            good = len(seen) == 1 and seen[0]["kind"] == a["kind"] and seen[0]["size"] == a["bytes"]
            per_address.append({"api": a["api"], "kind": a["kind"], "addr": hex(a["addr"]), "bytes": a["bytes"],
                                "seen": len(seen), "trace_api": [e["api"] for e in seen],
                                "trace_kind": [e["kind"] for e in seen], "trace_size": [e["size"] for e in seen],
                                "ok": good})
        freed = []
        for fr in frees:
            seen = [e for e in ok_free if e["addr"] == fr["addr"]]
            freed.append({"api": fr["api"], "addr": hex(fr["addr"]), "seen": len(seen),
                          "trace_api": [e["api"] for e in seen], "ok": len(seen) == 1})
        extras = [{"op": e["op"], "kind": e["kind"], "addr": hex(e["addr"]), "size": e["size"], "api": e["api"]}
                  for e in ok_alloc if e["addr"] not in mine and e["kind"] != "context"]
        bad = [p for p in per_address if not p["ok"]]
        add("dump: each allocation exactly once, right kind and size", not bad,
            f"{len(per_address) - len(bad)} of {len(per_address)} ok" + (f"; wrong: {bad}" if bad else ""))
        badf = [f for f in freed if not f["ok"]]
        add("dump: each free exactly once", not badf,
            f"{len(freed) - len(badf)} of {len(freed)} ok" + (f"; wrong: {badf}" if badf else ""))
        res["extra_trace_allocations"] = extras
        res["api_map"] = sorted({(p["api"], ",".join(p["trace_api"])) for p in per_address})
        res["dump"] = "used (unstable format, parsed by regex)"
    res["per_address"] = per_address
    res["status"] = "pass" if all(c["ok"] for c in res["checks"]) else "fail"
    return res


def frame_names(frames):
    return [f.get("function") or "" for f in frames]


def check_oom(args):
    res = {"program": "oom", "checks": []}

    def add(name, ok, detail):
        res["checks"].append({"name": name, "ok": ok, "detail": detail})

    request = None
    with open(args.program_out) as f:
        text = f.read()
    m = re.search(r"request=(\d+)", text) or re.search(r"allocate_weights: cudaMalloc\((\d+)\)", text)
    if m:
        request = int(m.group(1))
    res["request"] = request
    rep = cli_json(args.cli, "report", args.trace, "--json")
    failed = rep.get("failed_allocations", [])
    res["failed_allocations"] = failed
    match = [f for f in failed if request is None or f["size"] == request]
    add("failed request in report", bool(match),
        f"{len(failed)} failed allocations; sizes {[f['size'] for f in failed]}; program asked {request}")
    if not match:
        res["status"] = "fail"
        return res
    f = match[0]
    names = frame_names(f.get("frames", []))
    res["frames"] = [f"{x.get('function')} ({x.get('module')}:{x.get('line')})" for x in f.get("frames", [])]
    add("stack names the program's functions", any("allocate_weights" in n for n in names)
        and any("load_model" in n for n in names), f"frames: {res['frames']}")
    gib = 1 << 30
    add("live bytes at failure include the 1 GiB held", f["requested_live_device_bytes"] >= gib,
        f"requested_live_device_bytes {f['requested_live_device_bytes']:,} (exactly 1 GiB: "
        f"{f['requested_live_device_bytes'] == gib})")
    add("NVML free/total known at failure", f.get("device_free") is not None and f.get("device_total") is not None,
        f"device_free {f.get('device_free')}, device_total {f.get('device_total')}, snapshot {f.get('snapshot')}")
    add("error is out of memory", f.get("result") in (2,),
        f"result {f.get('result')} ({f.get('result_type')}), api {f.get('api')}")
    res["status"] = "pass" if all(c["ok"] for c in res["checks"]) else "fail"
    return res


def render(res, out):
    print(f"== {res['program']}: {res['status'].upper()} ==", file=out)
    if res.get("message"):
        print(res["message"], file=out)
    for c in res["checks"]:
        print(f"  [{'ok' if c['ok'] else 'FAIL'}] {c['name']}: {c['detail']}", file=out)
    if res.get("api_map"):
        print("  runtime call -> entry point in the trace: " +
              "; ".join(f"{a} -> {b or 'not seen'}" for a, b in res["api_map"]), file=out)
    if "extra_trace_allocations" in res:
        ex = res["extra_trace_allocations"]
        print(f"  allocations in the trace the program did not print: {len(ex)}"
              + "".join(f"\n    {e}" for e in ex[:20]), file=out)
    if res.get("dump"):
        print(f"  dump: {res['dump']}", file=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("static", "oom"))
    ap.add_argument("--cli", required=True)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--program-out", required=True)
    ap.add_argument("--json-out")
    args = ap.parse_args()
    try:
        res = check_static(args) if args.what == "static" else check_oom(args)
    except Exception as e:  # the CLI failed or printed something unexpected: say what
        res = {"program": "static_runtime" if args.what == "static" else "oom", "status": "error",
               "message": f"{type(e).__name__}: {e}", "checks": []}
    render(res, sys.stdout)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(res, f, indent=1)
    return {"pass": 0, "fail": 1}.get(res["status"], 2)


if __name__ == "__main__":
    sys.exit(main())
