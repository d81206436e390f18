"""ctypes mirror of include/cumemtrace/api.h (keep the structs in step with it).

The functions are looked up in the process's global scope (dlsym(RTLD_DEFAULT)), where a
preloaded libcumemtrace.so puts them; without it they are absent and every call here
returns False. A call only copies bytes into the tracer's buffer: no I/O, no CUDA call.
"""
import ctypes
import sys

BLOCK_INACTIVE = 0
BLOCK_ACTIVE_ALLOCATED = 1
BLOCK_ACTIVE_PENDING_FREE = 2


class Segment(ctypes.Structure):
    _fields_ = [
        ("address", ctypes.c_uint64),
        ("total_size", ctypes.c_uint64),
        ("allocated_size", ctypes.c_uint64),
        ("stream", ctypes.c_uint64),
        ("first_block", ctypes.c_uint32),
        ("block_count", ctypes.c_uint32),
        ("is_small", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
    ]


class Block(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint64), ("state", ctypes.c_uint32), ("reserved", ctypes.c_uint32)]


_functions = {}


def _function(name, argtypes):
    """The library's function `name`, or None when the tracer is not preloaded."""
    if name not in _functions:
        fn = None
        try:
            fn = getattr(ctypes.CDLL(None), name)
            fn.restype = ctypes.c_int
            fn.argtypes = argtypes
        except (OSError, AttributeError):
            fn = None
        _functions[name] = fn
    return _functions[name]


def _allocator_segments():
    return _function(
        "cumemtrace_allocator_segments",
        [ctypes.c_char_p, ctypes.c_int32, ctypes.POINTER(Segment), ctypes.c_size_t, ctypes.POINTER(Block),
         ctypes.c_size_t],
    )


def mark(name):
    """Records a mark named `name` (api.h: cumemtrace_mark): marks of one name delimit
    iterations for the growth analysis. True when recorded; False when not preloaded or
    not tracing yet (before the first CUDA call)."""
    fn = _function("cumemtrace_mark", [ctypes.c_char_p])
    return fn is not None and fn(str(name).encode("utf-8", "replace")) == 0


def available():
    """True when libcumemtrace.so is preloaded into this process."""
    return _allocator_segments() is not None


def allocator_segments(allocator, device, segments, blocks):
    """Records a caching allocator's map (api.h: cumemtrace_allocator_segments).

    `segments`: sequence of Segment, `blocks`: sequence of Block. True when recorded;
    False when not preloaded, not tracing yet, or refused (the library warns why)."""
    fn = _allocator_segments()
    if fn is None:
        return False
    seg_array = (Segment * len(segments))(*segments)
    block_array = (Block * len(blocks))(*blocks)
    return fn(allocator.encode(), int(device), seg_array, len(segments), block_array, len(blocks)) == 0


def warn(message):
    """One line on stderr (never stdout: the program's stdout is not ours)."""
    try:
        sys.stderr.write("cumemtrace: " + message + "\n")
    except Exception:
        pass
