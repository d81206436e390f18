"""pytest plugin: fail a test that uses more CUDA device memory than its marker allows.

    @pytest.mark.cuda_memory(max_peak="2 GiB", max_leaked=0, max_growth=None)
    def test_step(): ...

Run the tests under the tracer, ``cumemtrace run -- pytest ...`` (the plugin is found
through its ``pytest11`` entry point when the package is installed, or with
``-p cumemtrace.pytest_plugin``). Outside the preload a marked test is skipped with the
reason, never passed silently. The figures come from the library's own accounting
(api.h: cumemtrace_stats), per device, in the report's terms (tracked device memory):

- ``max_peak``: the highest tracked bytes during the test above what was live when it
  began (the test's own peak; memory held by fixtures set up earlier does not count). Its
  failure names the call sites that held the memory at that peak, freed since or not.
- ``max_leaked``: bytes allocated during the test and still live at its end. A caching
  allocator's cache counts (PyTorch keeps freed blocks in cudaMalloc'd segments): call
  ``torch.cuda.empty_cache()`` at the end of the test to count only what is held.
- ``max_growth``: growth per iteration of the test's live bytes, iterations being
  ``cumemtrace.mark(name)`` calls of one name during the test (the most frequent name,
  two marks at least); the steady part, as the report's growth analysis defines a leak:
  every step grows, the largest step at most 1.1 times the smallest. Not checked without
  such marks (NVTX ranges reach the trace, not this plugin: gate them with
  ``cumemtrace check --max-growth``).

No verdict without the data, as ``cumemtrace check``: when the tracer has seen no device by
the test's end (its figures are of nothing: CUDA reached by a way the tracer did not see),
a marked test fails with "figures are incomplete (no device seen)", unless the marker says
``allow_incomplete=True`` (then it is judged on those figures). The library's own counts
are exact otherwise: damage, cuts and dropped events concern the trace file, which
``cumemtrace check`` gates.

Limits are inclusive (a test at exactly the limit passes), as ``cumemtrace check``'s.
Sizes: a number of bytes, or with a unit, IEC (KiB, MiB, GiB, TiB) or SI (kB, MB, GB, TB).
Every test is also a tag named "pytest <node id>" (api.h: cumemtrace_tag_push), from its
start to its end: ``cumemtrace report --by range`` charges each test with what its thread
allocated while it ran, and nothing after it.
"""
import os
import re

import pytest

from . import _api, _site_names

_UNITS = {"": 1, "B": 1, "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40,
          "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}


def parse_size(value):
    """Bytes from an int or a string such as "512MiB", "1.5 GB", "0"; ValueError otherwise."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", str(value))
    unit = m and m.group(2).upper()
    if not m or unit not in _UNITS:
        raise ValueError("not a size: %r (bytes, or a number with KiB/MiB/GiB/TiB or kB/MB/GB/TB)" % (value,))
    number = m.group(1)
    whole, _, frac = number.partition(".")
    scaled = int(whole) * _UNITS[unit] + (int(frac) * _UNITS[unit] // 10**len(frac) if frac else 0)
    if frac and int(frac) * _UNITS[unit] % 10**len(frac):
        raise ValueError("not a whole number of bytes: %r" % (value,))
    return scaled


def count_of(n, noun):
    """"1 allocation", "2 allocations": the noun in the singular for exactly one."""
    return "%d %s" % (n, noun if n == 1 else noun + "s")


def iec(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return "%.2f %s (%s B)" % (n / size, unit, format(n, ","))
    return "%s B" % format(n, ",")


def steady_growth(series):
    """Growth per step of a series that grows at every step by a steady amount, else 0."""
    steps = [b - a for a, b in zip(series, series[1:])]
    if len(steps) < 2 or min(steps) <= 0 or max(steps) > 1.1 * min(steps):
        return 0
    return (series[-1] - series[0]) // len(steps)


class _Watch:
    """One marked test's figures: live bytes per device at its start and at each mark."""

    def __init__(self):
        self.start = {s.device: s.live_bytes for s in _api.stats() or []}
        self.at_marks = {}  # name -> [{device: live_since_reset_bytes}]

    def on_mark(self, name):
        self.at_marks.setdefault(name, []).append({s.device: s.live_since_reset_bytes for s in _api.stats() or []})

    def growth(self):
        """(mark name, {device: bytes per iteration}), or (None, {})."""
        runs = sorted(self.at_marks.items(), key=lambda kv: -len(kv[1]))
        if not runs or len(runs[0][1]) < 2:
            return None, {}
        name, points = runs[0]
        devices = set().union(*points)
        return name, {d: steady_growth([p.get(d, 0) for p in points]) for d in devices}


# Native frames that are never the user's (docs/cli.md, "Call sites in the user's terms"):
# the tracer, CUDA, the foreign-function layer, the interpreter, framework dispatch.
_NOT_USERS = ("libcumemtrace", "libcuda.so", "libcudart", "libffi", "_ctypes", "libpython", "python3",
              "libtorch", "libc10", "_C.", "libc.so", "ld-linux")


def _user_frames(names):
    """The frames from the innermost that is the user's on, by the call-site rule's native part."""
    for i, name in enumerate(names):
        if not name.startswith(_NOT_USERS) and not name.startswith("0x"):
            return names[i:]
    return []


def _not_users_python():
    """Folders whose Python code is never the user's: the standard library and installed
    packages (site-packages, dist-packages), pytest and pluggy among them."""
    import sysconfig
    roots = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots if r)


def _user_python(frames):
    """The user's Python frames, innermost first (the call-site rule's Python part): none
    in the standard library, installed packages or frozen modules."""
    skip = _not_users_python()

    def users(path):
        return not (path.startswith("<") or os.path.realpath(path).startswith(skip) or "/site-packages/" in path
                    or "/dist-packages/" in path)

    return [f for f in frames if users(f[0])]


def _shown_path(path, rootdir):
    if rootdir and path.startswith(os.path.join(str(rootdir), "")):
        return os.path.relpath(path, str(rootdir))
    return path


def _python_text(frame, rootdir):
    path, line, function = frame
    return "%s:%s in %s" % (_shown_path(path, rootdir), line if line >= 0 else "?", function)


# The user's callers kept per site, nearest first (call_site_rule.h: kMaxUserCallers).
_MAX_USER_CALLERS = 32
# Sites asked of the library to tell a site's frame apart from others' (the report reads
# every allocation of the trace; a test's live sites are what the plugin has).
_SITES_COMPARED = 256


def _user_part(site, python, rootdir):
    """The site's frame and the user's callers of it, nearest first (the call-site rule: its
    Python part, else its native part), with the frame's own text; ([], None) when none is
    the user's."""
    user_python = _user_python(python)
    if user_python:
        part = [_site_names.python_frame(path, line, function, _shown_path(path, rootdir))
                for path, line, function in user_python[:_MAX_USER_CALLERS + 1]]
        return part, _python_text(user_python[0], rootdir)
    names = [name for name in _user_frames([_api.frame_name(site.frames[i]) for i in range(site.n_frames)])
             if not name.startswith(_NOT_USERS) and not name.startswith("0x")]
    return [_site_names.Frame(name, name) for name in names[:_MAX_USER_CALLERS + 1]], names[0] if names else None


def _sites(at_peak=False):
    """The library's sites with their Python frames, most bytes first (api.h:
    cumemtrace_live_sites_python, or at the test's peak cumemtrace_peak_sites_python)."""
    with_python = _api.live_sites_python(_SITES_COMPARED, at_peak)
    if with_python is not None or at_peak:
        return with_python or []
    return [(s, []) for s in _api.live_sites(_SITES_COMPARED) or []]


def _site_lines(nodeid, rootdir, lists, limit=5):
    """Each list of (held, sites) as lines, its first `limit` sites: named together, so that a
    site is named alike in both (call_site_rule.h, CallerNames)."""
    parts = [[_user_part(site, python, rootdir) for site, python in sites] for _, sites in lists]
    callers = iter(_site_names.caller_names([part for each in parts for part, _ in each]))
    out = []
    for (held, sites), named in zip(lists, parts):
        lines = []
        for (site, _), (_, text), caller in zip(sites, named, callers):
            if len(lines) < limit:
                where = text + caller if text else "Python code run by %s (the trace has its line)" % nodeid
                lines.append("  %s in %d %s on device %d from %s" % (
                    iec(site.bytes), site.count, held, site.device, where))
        out.append(lines)
    return out


_ARGUMENTS = ("max_peak", "max_leaked", "max_growth", "allow_incomplete")


def marker_limits(marker):
    """({limit: bytes}, allow_incomplete) of a cuda_memory marker; ValueError saying, in
    one line, what is wrong with it."""
    if marker.args:
        raise ValueError("takes keyword arguments only: %s" % ", ".join(_ARGUMENTS))
    unknown = sorted(set(marker.kwargs) - set(_ARGUMENTS))
    if unknown:
        raise ValueError("unknown argument %s (it takes %s)" % (", ".join(unknown), ", ".join(_ARGUMENTS)))
    limits = {}
    for name, value in marker.kwargs.items():
        if value is None or name == "allow_incomplete":
            continue
        try:
            limits[name] = parse_size(value)
        except ValueError as e:
            raise ValueError("%s: %s" % (name, e)) from None
    return limits, bool(marker.kwargs.get("allow_incomplete", False))


def pytest_collection_modifyitems(config, items):
    """A marker's mistake is a usage error, said before any test runs, with or without the
    tracer: pytest prints each as one "ERROR:" line, with no traceback, and exits 4 (raised
    while a test runs it would be that test's failure, under a traceback of pytest's own
    frames)."""
    errors = []
    for item in items:
        marker = item.get_closest_marker("cuda_memory")
        if marker is None:
            continue
        try:
            marker_limits(marker)
        except ValueError as e:
            errors.append("%s: cuda_memory: %s" % (item.nodeid, e))
    if errors:
        raise pytest.UsageError(*errors)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "cuda_memory(max_peak=None, max_leaked=None, max_growth=None, allow_incomplete=False): fail the test when "
        "its CUDA device memory (traced by cumemtrace) passes a limit, or when no device was seen; skipped when the "
        "tracer is not preloaded")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    marker = item.get_closest_marker("cuda_memory")
    if marker is None:
        with _api.tag("pytest " + item.nodeid):
            yield
        return
    if not _api.available():
        pytest.skip("cuda_memory: libcumemtrace.so is not preloaded (run the tests under `cumemtrace run -- pytest ...`)")
    limits, allow_incomplete = marker_limits(marker)  # checked at collection (pytest_collection_modifyitems)
    _api.reset_peak()
    watch = _Watch()
    _api._mark_observers.append(watch.on_mark)
    try:
        with _api.tag("pytest " + item.nodeid):
            yield
    finally:
        _api._mark_observers.remove(watch.on_mark)
    item.stash[_FAILURES] = _over_limits(limits, watch, item.nodeid, allow_incomplete, item.config.rootpath)


_FAILURES = pytest.StashKey()


def _over_limits(limits, watch, nodeid, allow_incomplete=False, rootdir=None):
    """The failure message, or None when every limit holds."""
    stats = _api.stats() or []
    if limits and not allow_incomplete and not any(s.device >= 0 for s in stats):
        return ("cuda_memory: figures are incomplete (no device seen): no limit judged "
                "(allow_incomplete=True judges them on incomplete figures)")
    failures = []
    peak_failed = False
    for s in stats:
        where = "device %d" % s.device
        peak = s.peak_since_reset_bytes - min(watch.start.get(s.device, 0), s.peak_since_reset_bytes)
        if "max_peak" in limits and peak > limits["max_peak"]:
            failures.append("peak on %s: %s, limit %s" % (where, iec(peak), iec(limits["max_peak"])))
            peak_failed = True
        if "max_leaked" in limits and s.live_since_reset_bytes > limits["max_leaked"]:
            failures.append("leaked on %s: %s in %s, limit %s" % (
                where, iec(s.live_since_reset_bytes), count_of(s.live_since_reset_count, "allocation"),
                iec(limits["max_leaked"])))
    if "max_growth" in limits:
        name, growth = watch.growth()
        for device, per_iteration in sorted(growth.items()):
            if per_iteration > limits["max_growth"]:
                failures.append("growth per iteration (marks %r) on device %d: %s, limit %s" % (
                    name, device, iec(per_iteration), iec(limits["max_growth"])))
    if not failures:
        return None
    message = "CUDA memory over the cuda_memory limits:\n  " + "\n  ".join(failures)
    # What held the peak may be freed by now: the sites of the test's own peak first.
    at_peak, live = _site_lines(nodeid, rootdir, [("held at the peak", _sites(at_peak=True) if peak_failed else []),
                                                  ("live", _sites())])
    if at_peak:
        message += "\nat the test's peak, allocated during the test (top call sites):\n" + "\n".join(at_peak)
    if live:
        message += "\nlive now, allocated during the test (top call sites):\n" + "\n".join(live)
    return message


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    message = item.stash.get(_FAILURES, None) if call.when == "call" else None
    if message and report.passed:  # a test that failed on its own keeps its own failure
        report.outcome = "failed"
        report.longrepr = message
