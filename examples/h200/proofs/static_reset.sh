#!/usr/bin/env bash
# Run L: how the static runtime's cudaDeviceReset reaches the driver. teardown.c built
# with nvcc's default static runtime and with -cudart shared, each run under the lookup
# logger (proc_lookups.c) and under cumemtrace; the report's teardown counts beside it.
#   examples/h200/proofs/static_reset.sh OUTDIR    (env: NVCC, CUMEMTRACE, CUMEMTRACE_LIBRARY)
set -u
h200=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$h200/../.." && pwd)
out=${1:?usage: static_reset.sh OUTDIR}
mkdir -p "$out"
NVCC=${NVCC:-nvcc} CLI=${CUMEMTRACE:-$top/build/bin/cumemtrace}
LIB=${CUMEMTRACE_LIBRARY:-$top/build/lib/libcumemtrace.so}
gcc -shared -fPIC -O1 -I/usr/local/cuda/include -o "$out/proc_lookups.so" "$h200/cuda/proc_lookups.c" -ldl || exit 1
for rt in static shared; do
  "$NVCC" -O1 -cudart "$rt" -o "$out/teardown-$rt" "$top/test/integration/programs/lifecycle/teardown.c" -lcuda || exit 1
  LD_PRELOAD="$out/proc_lookups.so" "$out/teardown-$rt" reset >"$out/$rt.out" 2>"$out/$rt.lookups"
  echo "== $rt: exit $?, $(wc -l <"$out/$rt.lookups") lookups; reset/release/destroy ones:"
  grep -i "reset\|release\|destroy\|export table" "$out/$rt.lookups" | sort | uniq -c
  grep -c "^dlsym" "$out/$rt.lookups"
  LD_PRELOAD="$LIB" CUMEMTRACE_OUTPUT="$out/$rt.trace" "$out/teardown-$rt" reset >/dev/null 2>&1
  "$CLI" report --json "$out/$rt.trace" >"$out/$rt.json"
  python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
for d in r["devices"]:
    if d["device"] >= 0:
        print("   traced: device", d["device"], "end bytes", d["end"]["device_bytes"], "counts", {k: d["counts"][k] for k in ("allocs","frees","failed")},
              "teardown frees", d["counts"].get("teardown_frees"))' "$out/$rt.json"
done 2>&1 | tee "$out/static_reset.txt"
