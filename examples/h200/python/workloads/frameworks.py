#!/usr/bin/env python3
"""Allocates GPU memory through another framework than PyTorch, under cumemtrace.

CuPy and JAX load their CUDA libraries from Python extension modules, i.e. with
dlopen(RTLD_LOCAL): the case where the runtime is in no global scope. Each mode makes a
few arrays, synchronizes, and logs one JSON line per checkpoint with time.monotonic_ns()
and the framework's own accounting, for check_frameworks.py to compare with the trace.

usage: frameworks.py cupy|jax LOGFILE
"""
import json
import sys
import time


def log(path, **fields):
    fields["t_ns"] = time.monotonic_ns()
    with open(path, "a") as f:
        f.write(json.dumps(fields) + "\n")


def run_cupy(path):
    import cupy

    pool = cupy.get_default_memory_pool()
    arrays = [cupy.zeros(n, dtype=cupy.float32) for n in (1 << 10, 1 << 20, 3 << 20, 64 << 20)]
    cupy.cuda.Device().synchronize()
    log(path, framework="cupy", checkpoint="arrays", pool_total=pool.total_bytes(), pool_used=pool.used_bytes())
    del arrays
    pool.free_all_blocks()
    cupy.cuda.Device().synchronize()
    log(path, framework="cupy", checkpoint="freed", pool_total=pool.total_bytes(), pool_used=pool.used_bytes())


def run_jax(path):
    import jax
    import jax.numpy as jnp

    x = jnp.ones((4096, 4096), dtype=jnp.float32)
    y = (x @ x).block_until_ready()
    stats = jax.devices()[0].memory_stats() or {}
    log(path, framework="jax", checkpoint="arrays", stats={k: v for k, v in stats.items() if isinstance(v, int)},
        backend=jax.default_backend())
    del x, y


if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[2]
    try:
        {"cupy": run_cupy, "jax": run_jax}[mode](path)
    except Exception as e:  # the checker reports it; the script must not hide it
        log(path, framework=mode, checkpoint="error", error=f"{type(e).__name__}: {e}")
        raise
