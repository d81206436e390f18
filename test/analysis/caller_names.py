"""Names the sites of a JSON file by the pytest plugin's call-site names
(python/cumemtrace/_site_names.py), for reports/site_names_test.cpp to hold them to the
analyzer's (call_site_rule.h, CallerNames). The file: {"sites": [[frame, ...], ...]}, each
site's user part nearest first, a frame {"function", "file", "line", "python"}. Prints the
names, a JSON list, as the plugin frames them: a Python frame by its function, or
"FILE:LINE in FUNCTION"; a native one by its function, or "FUNCTION at FILE:LINE"."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from cumemtrace import _site_names  # noqa: E402


def frame(f):
    shown = os.path.basename(f["file"])
    if f["python"]:
        return _site_names.python_frame(f["file"], f["line"], f["function"], shown)
    return _site_names.Frame((f["file"], f["line"], f["function"]), f["function"],
                             "%s at %s:%d" % (f["function"], shown, f["line"]))


with open(sys.argv[1]) as source:
    sites = json.load(source)["sites"]
print(json.dumps(_site_names.caller_names([[frame(f) for f in site] for site in sites]), ensure_ascii=False))
