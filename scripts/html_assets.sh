#!/usr/bin/env bash
# Installs, from their lock files and with npm's configured registry, the libraries that
# `cumemtrace html` embeds (view/html) and the browser driver of its test (test/html),
# and DuckDB for the test of docs/tables.md's query (test/tables).
# CMake embeds view/html's built files into the CLI; nothing here is needed at run time.
# The lock files carry no registry address (.npmrc: omit-lockfile-registry-resolved).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
command -v npm >/dev/null || { echo "html_assets: npm is missing (apt-get install npm)" >&2; exit 1; }
for d in view/html test/html test/tables; do
  lock="$top/$d/package-lock.json"
  stamp="$top/$d/node_modules/.package-lock.json"
  if [[ ! -f "$stamp" || "$lock" -nt "$stamp" ]]; then
    echo "html_assets: npm ci in $d" >&2
    # npm says "added N packages" on stdout: progress, which a caller's stdout (the demo's
    # report) must not carry.
    (cd "$top/$d" && npm ci --no-audit --no-fund --loglevel=error) >&2
  fi
done
echo "html_assets: ready" >&2
