"""Loads a memory_viz snapshot the way PyTorch would, for export_test.cpp (and
examples/h200/python/checks/memviz_check.py, which imports history_errors).

Usage: memviz_load.py SNAPSHOT.pickle
Prints one JSON object: the first two bytes, the opcodes used (by pickletools), the
number of FRAME opcodes, what history_errors found, and the snapshot itself as
pickle.load returns it. The pure Python unpickler is run too, because it (unlike the C
one) refuses an opcode that straddles two frames; the two loads must agree.
"""
import io
import json
import pickle
import pickletools
import sys


def unmap_undone(segments, addr, size):
    """MemoryViz.js puts an unmapped range back and joins it to the segments it touches
    (an expandable segment is one segment of every mapping in a row)."""
    segments[addr] = size
    after = addr + size
    if after in segments:
        segments[addr] += segments.pop(after)
    before = next((a for a, n in segments.items() if a + n == addr), None)
    if before is not None:
        segments[before] += segments.pop(addr)


def map_undone(segments, addr, size):
    """MemoryViz.js takes a mapped range out of the segment holding it, splitting it."""
    holder = next((a for a, n in segments.items() if a <= addr and addr + size <= a + n), None)
    if holder is None:
        return False
    end = holder + segments.pop(holder)
    if holder < addr:
        segments[holder] = addr - holder
    if addr + size < end:
        segments[addr + size] = end - addr - size
    return True


def history_errors(snapshot):
    """The undo of MemoryViz.js's "Allocator State History" (EventSelector): from the
    end state in `segments`, take the events back one by one, and list every moment a
    live block lies outside every segment (the view goes blank then) or a segment_alloc
    or segment_map undoes a segment that is not there (the view drops another one)."""
    errors = []
    for device, trace in enumerate(snapshot["device_traces"]):
        segments = {s["address"]: s["total_size"] for s in snapshot["segments"] if s["device"] == device}
        blocks = {}
        for s in snapshot["segments"]:
            if s["device"] != device:
                continue
            addr = s["address"]
            for b in s["blocks"]:
                if b["state"] in ("active_allocated", "active_pending_free"):
                    blocks[addr] = b["size"]
                addr += b["size"]
        for i in range(len(trace) - 1, -1, -1):
            e = trace[i]
            act = e["action"]
            if act == "segment_free":
                segments[e["addr"]] = e["size"]
            elif act == "segment_alloc" and segments.pop(e["addr"], None) is None:
                errors.append(f"device {device} event {i}: segment_alloc of a segment not in the history")
            elif act == "segment_unmap":
                unmap_undone(segments, e["addr"], e["size"])
            elif act == "segment_map" and not map_undone(segments, e["addr"], e["size"]):
                errors.append(f"device {device} event {i}: segment_map of a range no segment holds")
            elif act == "alloc":
                blocks.pop(e["addr"], None)
            elif act in ("free", "free_completed"):
                blocks[e["addr"]] = e["size"]
            for addr, size in blocks.items():
                if not any(a <= addr and addr + size <= a + n for a, n in segments.items()):
                    errors.append(f"device {device} before event {i}: block {addr:#x}+{size} outside every segment")
    return errors


def main():
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
        "history_errors": history_errors(snapshot),
        "snapshot": snapshot,
    }))


if __name__ == "__main__":
    main()
