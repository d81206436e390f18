#!/usr/bin/env python3
"""A small Transformer training job whose memory PyTorch itself reports at checkpoints.

check_pytorch.py asks `cumemtrace live` what the trace says at the same moments and
compares. Every line of the log (--log, JSON Lines) is one object with an "event":

  start       mode, run, pid, torch and CUDA versions, device, allocator settings, config
  checkpoint  label, step, t_ns (time.monotonic_ns() right after torch.cuda.synchronize(),
              the clock of the trace), memory_reserved, memory_allocated, selected
              memory_stats() figures, mem_get_info free/total
  step        step (1-based), ms (wall time of the step, synchronized at its end),
              launch_ms (the part of it the CPU took to queue the step's work: near ms,
              the step waits on the CPU), gpu_ms (the GPU's time between two CUDA events
              around the step's work) and t_ns (time.monotonic_ns() at its end, to set
              steps beside the trace's records)
  end         steps, mean_step_ms over steps after the first --warmup (5), median too
  error       what went wrong (the exception), when the job fails

Checkpoints: after the model and optimizer exist, after step 1, every 10 steps, after the
last step, after torch.cuda.empty_cache().

Modes set PYTORCH_CUDA_ALLOC_CONF before torch is imported (a value already in the
environment is kept if it says the same thing): default (the native caching allocator),
expandable (expandable_segments:True), async (backend:cudaMallocAsync).
"""
import argparse
import json
import os
import statistics
import sys
import time

MODES = {
    "default": None,
    "expandable": "expandable_segments:True",
    "async": "backend:cudaMallocAsync",
}

# memory_stats() keys worth comparing; missing keys are logged as null.
STAT_KEYS = (
    "reserved_bytes.all.current",
    "allocated_bytes.all.current",
    "active_bytes.all.current",
    "requested_bytes.all.current",
    "inactive_split_bytes.all.current",
    "segment.all.current",
    "allocation.all.current",
    "num_alloc_retries",
    "num_ooms",
)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mode", choices=sorted(MODES), default="default")
    p.add_argument("--log", required=True, help="JSON Lines output file (appended to)")
    p.add_argument("--run", default=None, help="label of this run in the log (default: the mode)")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--warmup", type=int, default=5, help="steps left out of the mean step time")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--d-model", type=int, default=1024)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--vocab", type=int, default=8192)
    p.add_argument("--dtype", choices=("bf16", "fp32"), default="bf16",
                   help="bf16: autocast over fp32 weights (the common recipe); fp32: no autocast")
    p.add_argument("--record-history", action="store_true",
                   help="torch.cuda.memory._record_memory_history for the whole run")
    p.add_argument("--history-stacks", choices=("all", "python"), default="all",
                   help="the stacks --record-history asks PyTorch for (issue 26's anchor: python)")
    return p.parse_args()


def set_alloc_conf(mode):
    want = MODES[mode]
    have = os.environ.get("PYTORCH_CUDA_ALLOC_CONF")
    if want is None:
        if have:
            sys.exit(f"train.py: --mode default but PYTORCH_CUDA_ALLOC_CONF={have!r} is set")
        return None
    if have and have != want:
        sys.exit(f"train.py: --mode {mode} wants PYTORCH_CUDA_ALLOC_CONF={want!r}, environment has {have!r}")
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = want
    return want


class Log:
    def __init__(self, path, run):
        self.f = open(path, "a", buffering=1)
        self.run = run

    def write(self, event, **fields):
        line = json.dumps({"run": self.run, "event": event, **fields}, sort_keys=False)
        self.f.write(line + "\n")
        print(line, flush=True)


def checkpoint(torch, log, label, step):
    torch.cuda.synchronize()
    # Taken before reading the figures: nothing below allocates device memory.
    t_ns = time.monotonic_ns()
    stats = torch.cuda.memory_stats()
    free, total = torch.cuda.mem_get_info()
    log.write("checkpoint", label=label, step=step, t_ns=t_ns,
              memory_reserved=torch.cuda.memory_reserved(),
              memory_allocated=torch.cuda.memory_allocated(),
              stats={k: stats.get(k) for k in STAT_KEYS},
              mem_get_info={"free": free, "total": total})


def start_history(torch, stacks="all"):
    rec = torch.cuda.memory._record_memory_history
    try:
        rec(enabled="all", context="all", stacks=stacks, max_entries=100000)
    except TypeError:  # older signature
        rec(True, trace_alloc_max_entries=100000, trace_alloc_record_context=True)


def main():
    args = parse_args()
    if args.steps < 1 or args.warmup < 0:
        sys.exit("train.py: --steps must be >= 1 and --warmup >= 0")
    conf = set_alloc_conf(args.mode)
    log = Log(args.log, args.run or args.mode)
    try:
        import torch
        import torch.nn as nn
    except Exception as e:  # no torch here: say so in the log, exit non-zero
        log.write("error", where="import torch", message=repr(e))
        return 1

    if not torch.cuda.is_available():
        log.write("error", where="torch.cuda.is_available", message="no CUDA device")
        return 1
    dev = torch.device("cuda", torch.cuda.current_device())
    try:
        backend = torch.cuda.memory.get_allocator_backend()
    except Exception as e:
        backend = f"unknown ({e!r})"
    log.write("start", mode=args.mode, pid=os.getpid(), alloc_conf=conf, allocator_backend=backend,
              torch=torch.__version__, cuda=torch.version.cuda, device_index=dev.index,
              device_name=torch.cuda.get_device_name(dev), record_history=args.record_history,
              config={k: v for k, v in vars(args).items() if k not in ("log", "run", "mode")})
    try:
        if args.record_history:
            start_history(torch, args.history_stacks)
        torch.manual_seed(0)

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(args.vocab, args.d_model)
                layer = nn.TransformerEncoderLayer(args.d_model, args.heads, dim_feedforward=4 * args.d_model,
                                                   dropout=0.1, batch_first=True, norm_first=True)
                self.encoder = nn.TransformerEncoder(layer, args.layers, enable_nested_tensor=False)
                self.head = nn.Linear(args.d_model, args.vocab)

            def forward(self, tokens):
                return self.head(self.encoder(self.embed(tokens)))

        model = Model().to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        loss_fn = nn.CrossEntropyLoss()
        checkpoint(torch, log, "model-created", 0)

        times = []
        begin, finish = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for step in range(1, args.steps + 1):
            t0 = time.perf_counter()
            begin.record()
            tokens = torch.randint(0, args.vocab, (args.batch, args.seq), device=dev)
            target = torch.randint(0, args.vocab, (args.batch, args.seq), device=dev)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.dtype == "bf16"):
                logits = model(tokens)
                loss = loss_fn(logits.view(-1, args.vocab).float(), target.view(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            finish.record()
            launch_ms = (time.perf_counter() - t0) * 1e3
            torch.cuda.synchronize()
            ms = (time.perf_counter() - t0) * 1e3
            t_ns = time.monotonic_ns()
            times.append(ms)
            log.write("step", step=step, ms=round(ms, 3), launch_ms=round(launch_ms, 3),
                      gpu_ms=round(begin.elapsed_time(finish), 3), t_ns=t_ns, loss=round(loss.item(), 4))
            if step == 1 or step % 10 == 0 or step == args.steps:
                checkpoint(torch, log, f"step-{step}", step)

        del logits, loss, tokens, target
        checkpoint(torch, log, "end", args.steps)
        torch.cuda.empty_cache()
        checkpoint(torch, log, "after-empty-cache", args.steps)
        if args.record_history:
            torch.cuda.memory._record_memory_history(enabled=None)
        measured = times[args.warmup:] or times
        log.write("end", steps=len(times), warmup=args.warmup,
                  mean_step_ms=round(statistics.fmean(measured), 3),
                  median_step_ms=round(statistics.median(measured), 3),
                  min_step_ms=round(min(measured), 3))
        return 0
    except Exception as e:
        log.write("error", where="training", message=repr(e))
        raise


if __name__ == "__main__":
    sys.exit(main())
