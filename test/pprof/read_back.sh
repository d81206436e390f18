#!/bin/sh
# `cumemtrace export --format pprof` read back by Go's own pprof (`go tool pprof -raw`):
# the totals of a trace of test/programs/runtime_frag.cpp's frag5 against the simulated
# driver, known from the program: 512 B at A, 2 MiB - 512 of filler, a 1 GiB spacer, 512 B
# at B (the peak: 4 allocations, 1,075,839,488 B, also `report`'s); then filler and spacer
# are freed, so at the end 2 allocations of 1,024 B are in use. Allocated over the run:
# the same 4 and 1,075,839,488 B whatever the moment.
#   read_back.sh CLI PROG_RUNTIME PRELOAD SIM_DIR
set -u
cli=$1 prog=$2 preload=$3 sim=$4
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
export GOCACHE="$dir/gocache" HOME="$dir"
LD_PRELOAD=$preload LD_LIBRARY_PATH=$sim CUMEMTRACE_OUTPUT="$dir/t.trace" "$prog" frag5 -1 >/dev/null 2>&1 || {
  echo "frag5 failed"; exit 1; }
# The four columns of every sample, summed: alloc_objects alloc_space inuse_objects inuse_space.
totals() {
  go tool pprof -raw "$1" 2>/dev/null |
    awk '/^Samples:/ {s = 1; next} /^Locations/ {s = 0} s && $NF ~ /:$|[0-9]/ && $4 ~ /:$/ {a += $1; b += $2; c += $3; sub(":", "", $4); d += $4}
         END {printf "%d %d %d %d", a, b, c, d}'
}
fail=0
check() {  # what, got, want
  if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: got '$2', want '$3'"; fail=1; fi
}
"$cli" export --format pprof -o "$dir/peak.pb.gz" "$dir/t.trace" 2>/dev/null || { echo "export at the peak failed"; exit 1; }
"$cli" export --format pprof --at end -o "$dir/end.pb.gz" "$dir/t.trace" 2>/dev/null || { echo "export at the end failed"; exit 1; }
check "at the peak" "$(totals "$dir/peak.pb.gz")" "4 1075839488 4 1075839488"
check "at the end" "$(totals "$dir/end.pb.gz")" "4 1075839488 2 1024"
peak=$("$cli" report --json "$dir/t.trace" | python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][0]["peak"]["device_bytes"])')
check "report's peak" "$peak" "1075839488"
check "the default sample type" "$(go tool pprof -raw "$dir/peak.pb.gz" 2>/dev/null | grep -c 'inuse_space/bytes\[dflt\]')" "1"
exit $fail
