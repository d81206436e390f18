"""Calls into libcumemtrace.so from Python.

Every function here is a no-op (returning False) when the tracer is not preloaded, so a
program may call them unconditionally. Nothing is imported beyond the standard library;
``cumemtrace.torch`` uses PyTorch only if the program has already imported it.
"""
from ._api import available, live_sites, mark, reset_peak, stats, tag

__all__ = ["available", "live_sites", "mark", "reset_peak", "stats", "tag"]
