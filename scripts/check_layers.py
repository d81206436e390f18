#!/usr/bin/env python3
"""Fails on an #include that goes up the data path (docs/architecture.md, "Layers").

Each source file belongs to a stage; a stage may include its own files and those of the
stages its CMake targets link, directly or through what those pass on: as CMake passes on
usage requirements, a PUBLIC or INTERFACE link (or one with no keyword) is passed on to
whatever links the target, a PRIVATE one is the target's own. The graph is declared
once, in the CMake files: this script reads it from there and keeps no copy. Both forms of
include are checked: "name" must be a file of the tree (anything else is an error), <name>
is checked when it is one and is an external header otherwise. Prints `file:line: ...` for
each include that breaks the rule and exits 1; exits 0 when there is none.
Usage: scripts/check_layers.py [REPO]
"""
import re
import sys
from pathlib import Path

# Where each stage's files are. The tracer's hook table and its ids sit at the root of
# interpose/ beside the spine (lifecycle.cpp) but are a stage of their own, which every
# tracer stage links (cumemtrace_hook_table).
INTERPOSE_TABLE = ("hook_table.def", "hook_ids.h")


def stage_of(path: Path, top: Path) -> str | None:
    rel = path.relative_to(top).as_posix()
    parts = rel.split("/")
    if rel.startswith("include/cumemtrace/"):
        return "contract"
    if parts[0] == "sim":
        return "sim"
    if parts[0] == "interpose":
        if len(parts) > 2 and parts[1] == "link_check":
            return None  # the link checks' stand-ins: build fixtures, never in the library
        if len(parts) == 2 and parts[1] in INTERPOSE_TABLE:
            return "interpose/table"
        if len(parts) > 2 and (top / "interpose" / parts[1]).is_dir():
            return f"interpose/{parts[1]}"
        return "interpose"
    if rel.startswith("view/html/"):
        return "view"
    if parts[0] == "analysis":
        if len(parts) > 2 and (top / "analysis" / parts[1]).is_dir():
            return f"analysis/{parts[1]}"
        return "analysis"
    return None  # tests, fuzz targets, benchmarks, examples: free to include anything


COMMENT = re.compile(r"#[^\n]*")
COMMAND = re.compile(r"\b(\w+)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)", re.S)
KEYWORDS = {"STATIC", "SHARED", "OBJECT", "INTERFACE", "MODULE", "PUBLIC", "PRIVATE", "SYSTEM", "BEFORE", "AFTER"}


class Target:
    def __init__(self) -> None:
        self.stage: str | None = None
        self.links: list[tuple[str, bool]] = []  # (target, passed on to what links this one)
        self.include_dirs: list[Path] = []


def commands(cmake: Path):
    """(name, arguments) of each command in a CMake file, comments dropped."""
    text = COMMENT.sub("", cmake.read_text(errors="replace"))
    for m in COMMAND.finditer(text):
        yield m.group(1).lower(), m.group(2).split()


def read_graph(top: Path) -> dict[str, Target]:
    """Every target the product's CMake files declare (tests' are not stages), with its
    stage (that of its first source; none for an INTERFACE library of settings), the
    targets it links and the include directories it declares."""
    files = [top / "CMakeLists.txt"] + [
        p for p in sorted(top.glob("*/**/CMakeLists.txt")) if stage_of(p, top) is not None
    ]
    # Functions that declare or link a target named by their first argument.
    functions: dict[str, tuple[str, list[tuple[str, list[str]]]]] = {}
    for cmake in files:
        current = None
        for name, args in commands(cmake):
            if name == "function":
                current = (args[0].lower(), args[1] if len(args) > 1 else "", [])
            elif name == "endfunction" and current is not None:
                functions[current[0]] = (current[1], current[2])
                current = None
            elif current is not None:
                current[2].append((name, args))
    targets: dict[str, Target] = {}

    def apply(name: str, args: list[str], folder: Path) -> None:
        def path_of(word: str) -> Path | None:
            word = word.replace("${CMAKE_SOURCE_DIR}", str(top)).replace("${CMAKE_CURRENT_SOURCE_DIR}", str(folder))
            if "$" in word:
                return None
            return (folder / word).resolve()

        if name in ("add_library", "add_executable") and args:
            t = targets.setdefault(args[0], Target())
            for word in args[1:]:
                objects = re.fullmatch(r"\$<TARGET_OBJECTS:(\w+)>", word)
                if objects:
                    t.links.append((objects.group(1), True))
                    continue
                source = None if word in KEYWORDS else path_of(word)
                if t.stage is None and source is not None and source.is_file():
                    t.stage = stage_of(source, top)
        elif name == "target_link_libraries" and args:
            passed_on = True  # the plain signature passes its links on
            for word in args[1:]:
                if word in ("PUBLIC", "INTERFACE", "PRIVATE"):
                    passed_on = word != "PRIVATE"
                elif word not in KEYWORDS:
                    targets.setdefault(args[0], Target()).links.append((word, passed_on))
        elif name == "target_include_directories" and args:
            dirs = [path_of(w) for w in args[1:] if w not in KEYWORDS]
            targets.setdefault(args[0], Target()).include_dirs += [d for d in dirs if d is not None]
        elif name in functions and args:
            param, body = functions[name]
            for inner, inner_args in body:
                inner_args = [args[0] if w == "${" + param + "}" else w for w in inner_args]
                inner_args = [a for w in inner_args for a in (args[1:] if w == "${ARGN}" else [w])]
                apply(inner, inner_args, folder)

    for cmake in files:
        depth = 0
        for name, args in commands(cmake):
            depth += name == "function"
            depth -= name == "endfunction"
            if depth == 0:
                apply(name, args, cmake.parent)
    return targets


def reach(graph: dict[str, Target], start: str) -> set[str]:
    """The targets `start` links: its own links, and what each reached target passes on."""
    seen = {link for link, _ in graph[start].links if link in graph}
    todo = list(seen)
    while todo:
        for link, passed_on in graph[todo.pop()].links:
            if passed_on and link in graph and link not in seen:
                seen.add(link)
                todo.append(link)
    return seen


def stage_rules(graph: dict[str, Target]) -> tuple[dict[str, set[str]], dict[str, list[Path]]]:
    """Per stage: the stages it may include, and the include directories its targets see."""
    may, roots = {}, {}
    for name, target in graph.items():
        if target.stage is None:
            continue
        reached = reach(graph, name) | {name}
        may.setdefault(target.stage, set()).update(graph[t].stage for t in reached if graph[t].stage)
        roots.setdefault(target.stage, []).extend(d for t in reached for d in graph[t].include_dirs)
    return may, roots


INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<([^>]+)>)')


def find(name: str, bases) -> Path | None:
    for base in bases:
        candidate = base / name
        if candidate.is_file():
            return candidate.resolve()
    return None


def main() -> int:
    top = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()
    graph = read_graph(top)
    may, roots = stage_rules(graph)
    every_root = list(dict.fromkeys(d for ds in roots.values() for d in ds))
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
            quoted, name = m.group(1) is not None, m.group(1) or m.group(2)
            shown = name if quoted else f"<{name}>"
            # As the compiler looks: beside the includer (quoted only), then the stage's own
            # directories; then any stage's, to name the stage an include reaches into.
            beside = [path.parent] if quoted else []
            target = find(name, beside + roots.get(stage, [])) or find(name, every_root)
            if target is None:
                if quoted:
                    problems.append(f"{rel}:{number}: includes {shown}, which is no file of the tree")
                continue  # an external header
            target_stage = stage_of(target, top)
            if target_stage is None or target_stage == stage or target_stage in may.get(stage, set()):
                continue
            problems.append(f"{rel}:{number}: includes {shown} ({target_stage}), which {stage} may not include")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
