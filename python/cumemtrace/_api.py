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


class DeviceStats(ctypes.Structure):
    _fields_ = [
        ("device", ctypes.c_int32),
        ("reserved", ctypes.c_uint32),
        ("live_bytes", ctypes.c_uint64),
        ("peak_bytes", ctypes.c_uint64),
        ("peak_since_reset_bytes", ctypes.c_uint64),
        ("live_since_reset_bytes", ctypes.c_uint64),
        ("live_since_reset_count", ctypes.c_uint64),
    ]


SITE_FRAMES = 16


class LiveSite(ctypes.Structure):
    _fields_ = [
        ("device", ctypes.c_int32),
        ("n_frames", ctypes.c_uint32),
        ("bytes", ctypes.c_uint64),
        ("count", ctypes.c_uint64),
        ("frames", ctypes.c_uint64 * SITE_FRAMES),
    ]


SITE_PYTHON_FRAMES = 16


class PythonFrame(ctypes.Structure):
    _fields_ = [
        ("line", ctypes.c_int32),
        ("reserved", ctypes.c_uint32),
        ("file", ctypes.c_char * 240),
        ("function", ctypes.c_char * 128),
    ]


class LiveSitePython(ctypes.Structure):
    _fields_ = [
        ("site", LiveSite),
        ("n_python", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
        ("python", PythonFrame * SITE_PYTHON_FRAMES),
    ]


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


_mark_observers = []


def mark(name):
    """Records a mark named `name` (api.h: cumemtrace_mark): marks of one name delimit
    iterations for the growth analysis. True when recorded (before the first CUDA call
    too: kept for the trace's start); False when not preloaded."""
    fn = _function("cumemtrace_mark", [ctypes.c_char_p])
    recorded = fn is not None and fn(str(name).encode("utf-8", "replace")) == 0
    if recorded:
        for observe in list(_mark_observers):
            observe(str(name))
    return recorded


def tag_push(name):
    """Opens tag `name` on this thread (api.h: cumemtrace_tag_push). True when recorded."""
    fn = _function("cumemtrace_tag_push", [ctypes.c_char_p])
    return fn is not None and fn(str(name).encode("utf-8", "replace")) == 0


def tag_pop():
    """Closes this thread's innermost tag (api.h: cumemtrace_tag_pop). True when recorded."""
    fn = _function("cumemtrace_tag_pop", [])
    return fn is not None and fn() == 0


def _steps(name, it):
    """Runs iterator `it` (a generator, or a coroutine's __await__) one step at a time, each
    step inside tag `name` and the tag closed while `it` is suspended, so that what others
    allocate meanwhile (the caller, other asyncio tasks on this thread) is not its, and no
    two interleaved tags close each other's. Returns what `it` returns."""
    send, arg = it.send, None
    while True:
        tag_push(name)
        try:
            out = send(arg)
        except StopIteration as stop:
            return stop.value
        finally:
            tag_pop()
        try:
            arg = yield out
            send = it.send
        except GeneratorExit:
            it.close()
            raise
        except BaseException as e:  # thrown in by the caller or the event loop: on to `it`
            send, arg = it.throw, e


class _Stepped:
    """An awaitable running a coroutine by _steps."""

    def __init__(self, name, coroutine):
        self.name, self.coroutine = name, coroutine

    def __await__(self):
        return (yield from _steps(self.name, self.coroutine.__await__()))


class tag:  # noqa: N801 (a context manager and decorator named as a function is)
    """Labels every allocation this thread makes inside it with `name`, for `cumemtrace
    report --by range`: ``with cumemtrace.tag("load"): ...`` or ``@cumemtrace.tag("step")``.
    Tags nest per thread and Python context: a tag held across an ``await`` counts what its
    asyncio task allocates, not what other tasks on the thread do meanwhile (docs/cli.md,
    'Memory per range'). A decorated generator function or ``async def`` is tagged while
    it runs, step by step (each step one call), not while it is suspended. Without the
    tracer preloaded it does nothing."""

    def __init__(self, name):
        self.name = str(name)

    def __enter__(self):
        tag_push(self.name)
        return self

    def __exit__(self, *exc):
        tag_pop()
        return False

    def __call__(self, fn):
        import functools
        import inspect

        name = self.name
        if inspect.isgeneratorfunction(fn):

            @functools.wraps(fn)
            def tagged_generator(*args, **kwargs):
                return (yield from _steps(name, fn(*args, **kwargs)))

            return tagged_generator
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def tagged_coroutine(*args, **kwargs):
                return await _Stepped(name, fn(*args, **kwargs))

            return tagged_coroutine

        @functools.wraps(fn)
        def tagged(*args, **kwargs):
            with tag(name):
                return fn(*args, **kwargs)

        return tagged


def stats():
    """Per device figures (api.h: cumemtrace_stats) as a list of DeviceStats, in bytes;
    None when not preloaded or no CUDA call was traced yet."""
    fn = _function("cumemtrace_stats", [ctypes.POINTER(DeviceStats), ctypes.c_size_t])
    if fn is None:
        return None
    room = 8
    while True:
        out = (DeviceStats * room)()
        n = fn(out, room)
        if n < 0:
            return None
        if n <= room:
            return list(out[:n])
        room = n


def reset_peak():
    """Starts a new "since" (api.h: cumemtrace_reset_peak). True when done."""
    fn = _function("cumemtrace_reset_peak", [])
    return fn is not None and fn() == 0


def live_sites(limit=10):
    """Allocations made since the last reset_peak() and live now, grouped by device and
    stack, most bytes first (api.h: cumemtrace_live_sites): at most `limit` LiveSite;
    None when not preloaded or not tracing."""
    fn = _function("cumemtrace_live_sites", [ctypes.POINTER(LiveSite), ctypes.c_size_t])
    if fn is None:
        return None
    out = (LiveSite * limit)()
    n = fn(out, limit)
    return None if n < 0 else list(out[:min(n, limit)])


def live_sites_python(limit=10, at_peak=False):
    """As live_sites, grouped by Python stack too (api.h: cumemtrace_live_sites_python):
    at most `limit` (LiveSite, [(file, line, function), ...]) pairs, Python frames innermost
    first; None when not preloaded, not tracing, or the library predates the call. With
    `at_peak`, what was live when each device reached its peak since the last reset_peak(),
    freed since or not (cumemtrace_peak_sites_python)."""
    name = "cumemtrace_peak_sites_python" if at_peak else "cumemtrace_live_sites_python"
    fn = _function(name, [ctypes.POINTER(LiveSitePython), ctypes.c_size_t])
    if fn is None:
        return None
    out = (LiveSitePython * limit)()
    n = fn(out, limit)
    if n < 0:
        return None
    sites = []
    for s in out[:min(n, limit)]:
        frames = [(f.file.decode(errors="replace"), f.line, f.function.decode(errors="replace"))
                  for f in s.python[:s.n_python]]
        sites.append((s.site, frames))
    return sites


def frame_name(address):
    """A return address as "module!symbol+0xoff" (dladdr: exported symbols only), or the
    module and offset, or hex."""
    info = _DlInfo()
    try:
        dladdr = ctypes.CDLL(None).dladdr
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        found = dladdr(ctypes.c_void_p(address), ctypes.byref(info))
    except (OSError, AttributeError):
        found = 0
    if not found or not info.dli_fname:
        return hex(address)
    module = info.dli_fname.decode(errors="replace").rsplit("/", 1)[-1]
    if info.dli_sname:
        return "%s!%s+%#x" % (module, info.dli_sname.decode(errors="replace"), address - (info.dli_saddr or 0))
    return "%s+%#x" % (module, address - (info.dli_fbase or 0))


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
