"""Loads a memory_viz snapshot the way PyTorch would, for export_test.cpp.

Usage: memviz_load.py SNAPSHOT.pickle
Prints one JSON object: the first two bytes, the opcodes used (by pickletools), the
number of FRAME opcodes, and the snapshot itself as pickle.load returns it. The pure
Python unpickler is run too, because it (unlike the C one) refuses an opcode that
straddles two frames; the two loads must agree.
"""
import io
import json
import pickle
import pickletools
import sys

with open(sys.argv[1], "rb") as f:
    data = f.read()
snapshot = pickle.loads(data)
if pickle._Unpickler(io.BytesIO(data)).load() != snapshot:
    sys.exit("the pure-Python unpickler read something else")
opcodes = [op.name for op, _, _ in pickletools.genops(data)]
print(json.dumps({
    "first_bytes": list(data[:2]),
    "opcodes": sorted(set(opcodes)),
    "frames": opcodes.count("FRAME"),
    "snapshot": snapshot,
}))
