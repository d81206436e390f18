"""Put on PYTHONPATH by `cumemtrace run --torch-oom` (never installed by pip): attaches
PyTorch's out-of-memory observer once the program imports torch (cumemtrace.torch), then
runs the sitecustomize this one shadows, if any, so the user's own still runs."""
import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))

try:
    import cumemtrace.torch

    cumemtrace.torch.install_when_imported()
except Exception as e:  # noqa: BLE001 - never stop the program from starting
    sys.stderr.write("cumemtrace: --torch-oom not set up: %r\n" % (e,))


def _run_shadowed():
    others = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_run_shadowed()
