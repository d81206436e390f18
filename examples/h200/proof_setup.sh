# Sourced by the proofs (proofs/*.sh) and by the runs here that share its set-up
# (recheck.sh, pyframes_gate.sh) as
#   . "$(dirname "$0")/../proof_setup.sh" NAME "$@"      (from proofs/; here: /proof_setup.sh)
# Sets h200 (this folder, examples/h200), top, OUT (the script's one argument, made), CLI
# (CUMEMTRACE, else the build tree's), PY (PYTHON, else python3), WORK (a fresh scratch
# folder) and LOG (OUT/NAME.txt, emptied).
set -u
h200=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$h200/../.." && pwd)
OUT=${2:?usage: $0 OUTDIR}
mkdir -p "$OUT"
CLI=${CUMEMTRACE:-$top/build/bin/cumemtrace}
PY=${PYTHON:-python3}
WORK=$(mktemp -d "/tmp/cumemtrace-$1.XXXXXX")
LOG=$OUT/$1.txt
: >"$LOG"
