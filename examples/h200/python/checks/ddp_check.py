"""ddp_check.py CUMEMTRACE CHECKPOINTS TRACE... : for each rank's checkpoints (JSON lines
printed by ddp_checkpoints.py), the bytes its trace says libc10_cuda.so held live on the
rank's device at that moment (kind `device`: PyTorch's default allocator makes only
cudaMalloc calls) against torch.cuda.memory_reserved(). Prints one line per checkpoint
and EXACT or DIFFERENT; exit 0 only when every one is exact."""
import json
import subprocess
import sys

cli, checkpoints, traces = sys.argv[1], sys.argv[2], sys.argv[3:]
by_rank = {}
for line in open(checkpoints):
    line = line.strip()
    if line.startswith("{") and '"memory_reserved"' in line:
        c = json.loads(line)
        by_rank.setdefault(c["rank"], []).append(c)
ok = True
for trace in traces:
    rep = json.loads(subprocess.run([cli, "report", "--json", trace], capture_output=True, text=True).stdout)
    rank = rep["process"].get("rank")
    cps = by_rank.get(rank, [])
    if not cps:
        print(f"{trace}: rank {rank}: no checkpoints")
        ok = False
        continue
    out = subprocess.run([cli, "live", trace, "--at", ",".join(str(c["t_ns"]) for c in cps), "--json"],
                         capture_output=True, text=True)
    for c, moment in zip(cps, json.loads(out.stdout)):
        dev = next((d for d in moment.get("devices", []) if d.get("device") == c["device"]), {})
        c10 = 0
        for row in dev.get("bytes_by_library", []):
            if row.get("library", "").startswith("libc10_cuda"):
                c10 += row.get("bytes_by_kind", {}).get("device", 0)
        same = c10 == c["memory_reserved"]
        ok &= same
        print(f"rank {rank} step {c['step']}: memory_reserved {c['memory_reserved']:,} B, "
              f"trace libc10_cuda.so {c10:,} B: {'EXACT' if same else 'DIFFERENT'}")
sys.exit(0 if ok else 1)
