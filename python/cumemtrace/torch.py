"""PyTorch's block map at an out-of-memory error, into the cumemtrace trace.

``install()`` attaches PyTorch's out-of-memory observer
(``torch._C._cuda_attach_out_of_memory_observer``, called as
``fn(device, alloc, device_allocated, device_free)`` just before PyTorch raises
OutOfMemoryError; PyTorch's own docs use it to dump a memory snapshot at OOM). On an
OOM the observer reads ``torch.cuda.memory_snapshot()`` (segments with ``device``,
``address``, ``total_size``, ``allocated_size``, ``stream``, ``segment_type`` and
``blocks`` of ``size`` and ``state``) and gives the failing device's segments to
libcumemtrace.so; ``cumemtrace report`` then shows the allocated and free bytes inside
the cached segments and the largest free block beside the failed allocation.

PyTorch is never imported here: only a ``torch`` the program already imported is used.
Without the tracer preloaded, everything here does nothing and returns False.
"""
import importlib.abc
import sys

from . import _api

ALLOCATOR = "pytorch"

# PyTorch's block states (memory_snapshot.cpp emits active_pending_free; its docstring
# once said active_awaiting_free). A state not known here counts as allocated: never as
# free, so "no free block is as large as the request" is never claimed wrongly.
_STATES = {
    "inactive": _api.BLOCK_INACTIVE,
    "active_allocated": _api.BLOCK_ACTIVE_ALLOCATED,
    "active_pending_free": _api.BLOCK_ACTIVE_PENDING_FREE,
    "active_awaiting_free": _api.BLOCK_ACTIVE_PENDING_FREE,
}

_installed = False   # install() attached (or queued) the observer
_recorded = 0        # maps given to the tracer


def installed():
    """True once install() has attached the observer (or queued it for CUDA's start)."""
    return _installed


def recorded():
    """How many block maps the observer has given to the tracer."""
    return _recorded


def encode_segments(snapshot, device):
    """(segments, blocks) of `device` from torch.cuda.memory_snapshot()'s list, as the
    ctypes structs of api.h."""
    segments, blocks = [], []
    for seg in snapshot:
        if int(seg.get("device", -1)) != int(device):
            continue
        seg_blocks = seg.get("blocks") or []
        segments.append(_api.Segment(
            address=int(seg.get("address", 0)),
            total_size=int(seg.get("total_size", 0)),
            allocated_size=int(seg.get("allocated_size", 0)),
            stream=int(seg.get("stream", 0) or 0),
            first_block=len(blocks),
            block_count=len(seg_blocks),
            is_small=1 if seg.get("segment_type") == "small" else 0,
        ))
        for b in seg_blocks:
            blocks.append(_api.Block(size=int(b.get("size", 0)),
                                     state=_STATES.get(b.get("state"), _api.BLOCK_ACTIVE_ALLOCATED)))
    return segments, blocks


def record_snapshot(device, snapshot=None):
    """Gives PyTorch's map of `device` (``torch.cuda.memory_snapshot()`` unless given) to
    the tracer. True when recorded."""
    global _recorded
    if not _api.available():
        return False
    if snapshot is None:
        torch = sys.modules.get("torch")
        if torch is None:
            return False
        snapshot = torch.cuda.memory_snapshot()
    segments, blocks = encode_segments(snapshot, device)
    ok = _api.allocator_segments(ALLOCATOR, device, segments, blocks)
    _recorded += ok
    return ok


def _on_oom(device, alloc, device_allocated, device_free):
    # Called by PyTorch with the GIL held, before it raises: never let anything escape.
    try:
        record_snapshot(device)
    except Exception as e:  # noqa: BLE001 - the job must go on to its own OutOfMemoryError
        _api.warn("could not record PyTorch's block map at the out-of-memory error: %r" % (e,))


def install():
    """Attaches the out-of-memory observer to an already imported torch. Returns True when
    attached (or queued until CUDA starts: PyTorch attaches observers to the allocators of
    the devices it has initialised), False when the tracer is not preloaded, torch is not
    imported or the observer cannot be attached (e.g. the cudaMallocAsync backend)."""
    global _installed
    if _installed:
        return True
    torch = sys.modules.get("torch")
    if torch is None or not _api.available():
        return False
    try:
        attach = torch._C._cuda_attach_out_of_memory_observer
        cuda = torch.cuda
        if cuda.is_initialized():
            attach(_on_oom)
        else:
            cuda._lazy_call(lambda: attach(_on_oom))
    except Exception as e:  # noqa: BLE001
        _api.warn("PyTorch's out-of-memory observer not attached: %r" % (e,))
        return False
    _installed = True
    return True


class _AfterTorchImport(importlib.abc.MetaPathFinder):
    """Runs install() once `import torch` has finished, without importing torch itself."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find else None
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                exec_module = spec.loader.exec_module

                def exec_then_install(module):
                    exec_module(module)
                    install()

                spec.loader.exec_module = exec_then_install
                return spec
        return None


def install_when_imported():
    """install() now if torch is imported, else as soon as the program imports it (what
    the sitecustomize of ``cumemtrace run --torch-oom`` calls). False when not preloaded."""
    if not _api.available():
        return False
    if "torch" in sys.modules:
        return install()
    if not any(isinstance(f, _AfterTorchImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterTorchImport())
    return True
