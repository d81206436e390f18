"""Run by `cumemtrace run --torch-oom`: a fake torch (see torch_oom.py) is imported only
after start-up, as a program would import the real one; prints whether the
sitecustomize attached the observer once it was, and what it did before."""
import importlib.abc
import importlib.machinery
import sys
import types

observers = []


class FakeTorch(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        return importlib.machinery.ModuleSpec(name, self) if name == "torch" else None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module._C = types.SimpleNamespace(_cuda_attach_out_of_memory_observer=observers.append)
        module.cuda = types.SimpleNamespace(is_initialized=lambda: True, _lazy_call=lambda fn: fn(),
                                            memory_snapshot=lambda: [])


before = "cumemtrace.torch" in sys.modules
sys.meta_path.append(FakeTorch())
import torch  # noqa: E402,F401

site = sys.modules.get("cumemtrace.torch")
print(f"loaded at start: {before}; installed: {bool(site and site.installed())}; observers: {len(observers)}; "
      f"user sitecustomize: {getattr(sys.modules.get('sitecustomize'), 'USER_SITECUSTOMIZE', False)}")
