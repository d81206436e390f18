#!/usr/bin/env bash
# Fails when a tracked C or C++ file differs from the house style (.clang-format at the
# top, sim/.clang-format for the simulated driver), naming each such file; `--fix`
# rewrites them instead. The style is clang-format 14's reading of those files (Debian 12,
# what CI has): another version formats some constructs differently, so it is refused
# rather than trusted. Usage: scripts/check_format.sh [--fix] [REPO]
set -euo pipefail
fix=0
if [[ "${1:-}" == --fix ]]; then fix=1; shift; fi
top=$(cd "${1:-$(dirname "$0")/..}" && pwd)
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [[ -z "$cf" ]] || ! "$cf" --version | grep -q 'version 14\.'; then
  echo "check_format: clang-format 14 not found (Debian 12's clang-format package; scripts/setup.sh installs it)" >&2
  exit 2
fi
cd "$top"
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.c' '*.cu')
if (( fix )); then
  "$cf" -i --style=file "${files[@]}"
  exit 0
fi
bad=0
for f in "${files[@]}"; do
  if ! "$cf" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "$f: differs from .clang-format (scripts/check_format.sh --fix rewrites it)"
    bad=1
  fi
done
exit "$bad"
