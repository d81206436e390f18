# Sourced by the proof scripts here (do_no_harm.sh, post_mortem.sh, recheck.sh, startup_budget.sh and others) as
#   . "$(dirname "$0")/proof_setup.sh" NAME "$@"
# Sets here, top, OUT (the script's one argument, made), CLI (CUMEMTRACE, else the build
# tree's), PY (PYTHON, else python3), WORK (a fresh scratch folder) and LOG
# (OUT/NAME.txt, emptied).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
OUT=${2:?usage: $0 OUTDIR}
mkdir -p "$OUT"
CLI=${CUMEMTRACE:-$top/build/bin/cumemtrace}
PY=${PYTHON:-python3}
WORK=$(mktemp -d "/tmp/cumemtrace-$1.XXXXXX")
LOG=$OUT/$1.txt
: >"$LOG"
