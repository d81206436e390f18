"""cumemtrace.torch against a FAKE torch (no PyTorch here): the stub exposes only what the
package uses — torch._C._cuda_attach_out_of_memory_observer and torch.cuda's
is_initialized, _lazy_call and memory_snapshot — and is put in sys.modules by hand.
On a 16 GiB simulated device (SIMCUDA_CAPACITY) it keeps an 8 GiB segment through the
simulated runtime (ctypes), fails to get 8 GiB more, then calls the observers as
PyTorch would before raising. The segment is 2 GiB allocated, 1 GiB free, 3 GiB
allocated, 512 MiB pending free, 1.5 GiB free; a segment of device 1 is left out.
argv: libcudart path, the source tree's python/ directory. Prints what it did."""
import ctypes
import sys
import types

sys.path.insert(0, sys.argv[2])

MiB, GiB = 1 << 20, 1 << 30
observers = []
segments = []
torch = types.ModuleType("torch")
torch._C = types.SimpleNamespace(_cuda_attach_out_of_memory_observer=observers.append)
torch.cuda = types.SimpleNamespace(is_initialized=lambda: False, _lazy_call=lambda fn: fn(),
                                   memory_snapshot=lambda: segments)
sys.modules["torch"] = torch

import cumemtrace.torch  # noqa: E402

installed = cumemtrace.torch.install()
rt = ctypes.CDLL(sys.argv[1])
p, q = ctypes.c_void_p(), ctypes.c_void_p()
assert rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(8 * GiB)) == 0
failed = rt.cudaMalloc(ctypes.byref(q), ctypes.c_size_t(8 * GiB))
blocks = [(2 * GiB, "active_allocated"), (1 * GiB, "inactive"), (3 * GiB, "active_allocated"),
          (512 * MiB, "active_pending_free"), (1536 * MiB, "inactive")]
segments.append({"device": 0, "address": p.value, "total_size": 8 * GiB, "allocated_size": 5 * GiB,
                 "stream": 0, "segment_type": "large",
                 "blocks": [{"size": s, "state": st} for s, st in blocks]})
segments.append({"device": 1, "address": 0x1000, "total_size": 2 * MiB, "allocated_size": 0, "stream": 0,
                 "segment_type": "small", "blocks": [{"size": 2 * MiB, "state": "inactive"}]})
for observe in observers:
    observe(0, 8 * GiB, 8 * GiB, 7 * GiB + 512 * MiB)
print(f"installed: {installed}; observers: {len(observers)}; failed: {failed}; "
      f"recorded: {cumemtrace.torch.recorded()}")
