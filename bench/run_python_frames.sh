#!/bin/sh
# Added cost per event of Python frames: bench/python_frames.py untraced, traced with
# CUMEMTRACE_PYTHON=0 and with CUMEMTRACE_PYTHON=1, at a Python stack DEPTH deep.
#   bench/run_python_frames.sh [BUILD_DIR=build] [PYTHON=/usr/bin/python3] [DEPTH=20]
set -eu
build=${1:-build}
python=${2:-/usr/bin/python3}
depth=${3:-20}
here=$(dirname "$0")
runtime=$build/sim/libcudart.so.13
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export LD_LIBRARY_PATH="$build/sim"
echo "plain:            $("$python" "$here/python_frames.py" "$runtime" "$depth")"
for on in 0 1; do
  echo "CUMEMTRACE_PYTHON=$on: $(CUMEMTRACE_PYTHON=$on CUMEMTRACE_OUTPUT="$out/t-$on.trace" \
    LD_PRELOAD="$build/lib/libcumemtrace.so" "$python" "$here/python_frames.py" "$runtime" "$depth")"
done
