#!/bin/sh
# A host name "../../x" in CUMEMTRACE_OUTPUT's %h (cumemtrace/rules/output_pattern.h):
# with the pattern in/%h-%p.trace, the trace of test/programs/runtime_frag.cpp's frag5 is
# in/______x-PID.trace, and nothing lands two folders up, where in/../../x-PID.trace
# would be. The host name is set in a UTS namespace of its own (unshare -u: root or user
# namespaces); skipped (77) where none can be made.
#   host_name.sh PROG_RUNTIME PRELOAD SIM_DIR
set -u
prog=$1 preload=$2 sim=$3
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
unshare -u python3 -c 'import socket; socket.sethostname("../../x")' 2>/dev/null || {
  echo "host_name: no UTS namespace can be made here (unshare -u); skipped" >&2
  exit 77
}
mkdir -p "$dir/a/b/in" && cd "$dir/a/b" || exit 1
unshare -u python3 - "$prog" "$preload" "$sim" >/dev/null 2>&1 <<'PY'
import os, socket, sys
socket.sethostname("../../x")
prog, preload, sim = sys.argv[1:4]
env = dict(os.environ, LD_PRELOAD=preload, LD_LIBRARY_PATH=sim, CUMEMTRACE_OUTPUT="in/%h-%p.trace")
os.execve(prog, [prog, "frag5", "-1"], env)
PY
fail=0
got=$(cd in && ls)
case "$got" in
  ______x-[0-9]*.trace) echo "ok   in/$got" ;;
  *) echo "FAIL in/ holds '$got', want ______x-PID.trace"; fail=1 ;;
esac
outside=$(cd "$dir" && find . -name '*.trace' ! -path './a/b/in/*')
[ -z "$outside" ] || { echo "FAIL traces outside in/: $outside"; fail=1; }
exit $fail
