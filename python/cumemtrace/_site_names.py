"""Call sites named by the one call-site rule's names (docs/cli.md, "Call sites in the
user's terms"; analysis/stacks/call_site_rule.h, CallerNames, which the report, check,
baselines and the job view use): a site is its frame, and, where other sites share that
frame, the nearest of the user's callers at which it differs from every one of them —
"alloc ← keep_history", "alloc ← … ← main" when the callers between agree, the caller's
line as well when another site's caller there has the same name. The plugin runs in the
traced process, apart from the analyzer, so it applies the same steps to the sites it was
given; test_site_names.py holds the two to the same examples.
"""


class Frame:
    """One frame of a site: `key` tells frames apart, `text` names it, `where` names it with
    its line (for two callers of one name)."""

    def __init__(self, key, text, where=None):
        self.key, self.text, self.where = key, text, where or text


def python_frame(path, line, function, shown=None):
    """A Python frame as the rule names it: by its function, or "FILE:LINE in FUNCTION" where
    another caller has that name (`shown`: the path as printed)."""
    at = "%s:%s" % (shown or path, line if line >= 0 else "?")
    return Frame((path, line, function), function or at, at + " in " + function)


def caller_names(parts):
    """`parts`: per site, its user part (the chosen frame, then the user's callers of it,
    nearest first), as Frames. Returns per site the text that follows its frame's name:
    "" when no caller is needed."""
    groups, texts = {}, {}
    for part in parts:
        if part:
            groups.setdefault(part[0].key, set()).add(tuple(f.key for f in part[1:]))
            for f in part[1:]:
                texts.setdefault(f.key, f.text)
    return [_name(part, groups, texts) for part in parts]


def _name(part, groups, texts):
    if len(part) < 2:  # no caller of the user's: the frame alone names it
        return ""
    group = groups.get(part[0].key, set())
    if len(group) < 2:
        return ""
    mine = tuple(f.key for f in part[1:])
    # The nearest depth at which no other site's callers agree with these up to there; the
    # whole chain when another site's callers extend it.
    depth = len(mine) - 1
    for d in range(len(mine)):
        if not any(other != mine and len(other) > d and other[:d + 1] == mine[:d + 1] for other in group):
            depth = d
            break
    caller = part[depth + 1]
    same_name = any(len(other) > depth and other[depth] != mine[depth] and texts.get(other[depth]) == caller.text
                    for other in group)
    return (" ← …" if depth else "") + " ← " + (caller.where if same_name else caller.text)
