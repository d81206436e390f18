#!/usr/bin/env python3
"""Fails on an #include that goes up the data path (docs/architecture.md, "Layers").

Each source file belongs to a stage; a stage may include its own files and those of the
stages listed for it below, never one further up. Prints `file:line: ...` for each
include that breaks the rule and exits 1; exits 0 when there is none.
Usage: scripts/check_layers.py [REPO]
"""
import re
import sys
from pathlib import Path

# Stage -> the stages it may include besides itself. The contract (include/cumemtrace) is
# the meeting point of the two sides: the tracer and the analyzer never include each other.
# The analyzer's stages are its folders, in the order of the data path:
# base <- read <- {replay, stacks} <- reports <- gate <- render <- cli, stacks <- symbols <- cli.
ANALYSIS_BELOW = {
    "base": set(),
    "read": {"base"},
    "replay": {"base", "read"},
    "stacks": {"base", "read"},
    "symbols": {"base", "read", "stacks"},
    "reports": {"base", "read", "replay", "stacks"},
    "gate": {"base", "read", "replay", "stacks", "reports"},
    "render": {"base", "read", "replay", "stacks", "reports", "gate"},
    "cli": {"base", "read", "replay", "stacks", "symbols", "reports", "gate", "render"},
}
# The tracer's stages: base <- resolve <- {probe, stacks} <- track <- api <- write <- hooks
# <- the spine (interpose/lifecycle.cpp). The hook table and its ids (interpose/hook_table.def,
# hook_ids.h) index every stage, so every stage may include them.
INTERPOSE_BELOW = {
    "base": set(),
    "resolve": {"base"},
    "probe": {"base", "resolve"},
    "stacks": {"base", "resolve"},
    "track": {"base", "resolve", "probe", "stacks"},
    "api": {"base", "resolve", "probe", "stacks", "track"},
    "write": {"base", "resolve", "probe", "stacks", "track", "api"},
    "hooks": {"base", "resolve", "probe", "stacks", "track", "api", "write"},
}
MAY_INCLUDE = {
    "contract": set(),
    "sim": set(),
    "interpose/table": set(),
    "interpose": {"contract", "interpose/table"} | {f"interpose/{s}" for s in INTERPOSE_BELOW},
    "view": set(),
    "analysis": {"contract"},  # the folder's root holds no code of its own
}
for _stage, _below in INTERPOSE_BELOW.items():
    MAY_INCLUDE[f"interpose/{_stage}"] = {"contract", "interpose/table"} | {f"interpose/{b}" for b in _below}
for _stage, _below in ANALYSIS_BELOW.items():
    MAY_INCLUDE[f"analysis/{_stage}"] = {"contract"} | {f"analysis/{b}" for b in _below}
MAY_INCLUDE["analysis/cli"].add("view")

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def stage_of(path: Path, top: Path) -> str | None:
    rel = path.relative_to(top).as_posix()
    if rel.startswith("include/cumemtrace/"):
        return "contract"
    if rel.startswith("sim/"):
        return "sim"
    if rel.startswith("interpose/"):
        parts = rel.split("/")
        if len(parts) > 2 and parts[1] in INTERPOSE_BELOW:
            return f"interpose/{parts[1]}"
        if parts[1] in ("hook_table.def", "hook_ids.h"):
            return "interpose/table"
        return "interpose"
    if rel.startswith("view/html/"):
        return "view"
    if rel.startswith("analysis/"):
        parts = rel.split("/")
        if len(parts) > 2 and parts[1] in ANALYSIS_BELOW:
            return f"analysis/{parts[1]}"
        return "analysis"
    return None  # tests, fuzz targets, benchmarks, examples: free to include anything


def resolve(name: str, including: Path, top: Path) -> Path | None:
    """The file an include names: beside the includer, then in the include directories."""
    for base in (including.parent, top / "include", top / "analysis", top / "interpose", top / "view/html", top / "sim"):
        candidate = base / name
        if candidate.is_file():
            return candidate.resolve()
    return None


def main() -> int:
    top = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()
    problems = []
    for path in sorted(top.glob("**/*")):
        if path.suffix not in {".h", ".c", ".cpp", ".def"} or not path.is_file():
            continue
        rel = path.relative_to(top).as_posix()
        if rel.startswith(("build", ".deps", "node_modules")) or "/node_modules/" in rel:
            continue
        stage = stage_of(path, top)
        if stage is None:
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = resolve(m.group(1), path, top)
            if target is None:
                continue  # a generated or external header
            target_stage = stage_of(target, top)
            if target_stage is None or target_stage == stage or target_stage in MAY_INCLUDE[stage]:
                continue
            problems.append(f"{rel}:{number}: includes {m.group(1)} ({target_stage}), which {stage} may not include")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
