#!/bin/sh
# `cumemtrace run`'s "trace written to PATH" line is text (docs/cli.md, "Strings from a
# trace"): with an OSC sequence, a BEL and a newline then ::error:: in -o, stderr holds
# them as \xNN, on one line, and no line a CI runner would read as a workflow command.
#   run_line.sh CLI PROG_RUNTIME PRELOAD SIM_DIR
set -u
cli=$1 prog=$2 preload=$3 sim=$4
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
esc=$(printf '\033') bel=$(printf '\007')
name="t${esc}]0;x${bel}
::error::y"
CUMEMTRACE_LIBRARY=$preload LD_LIBRARY_PATH=$sim "$cli" run -o "$dir/$name-%p.trace" -- "$prog" frag5 -1 \
  >/dev/null 2>"$dir/err" || { echo "run failed:"; cat "$dir/err"; exit 1; }
fail=0
grep -q "^cumemtrace: trace written to $dir/t\\\\x1b\\]0;x\\\\x07\\\\x0a::error::y-[0-9]*\\.trace (" "$dir/err" ||
  { echo "FAIL no escaped 'trace written to' line"; fail=1; }
if LC_ALL=C grep -q "[$esc$bel]" "$dir/err"; then echo "FAIL a raw ESC or BEL on stderr"; fail=1; fi
if grep -q '^::' "$dir/err"; then echo "FAIL a line starts a workflow command"; fail=1; fi
[ $fail = 0 ] && echo "ok   $(grep 'trace written' "$dir/err")"
exit $fail
