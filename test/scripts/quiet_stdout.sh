#!/bin/sh
# scripts/demo.sh and scripts/html_assets.sh keep stdout for the report: each runs in a
# copy of the tree whose tools are stand-ins that talk on stdout as the real ones do (npm's
# "added N packages", the setup's and the build's lines); stdout must be the report alone,
# and stderr must carry the demo's three steps and the tools' lines.
# Usage: quiet_stdout.sh SOURCE_DIR
set -u
src="$1"
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
fail() { echo "quiet_stdout: $*"; exit 1; }

mkdir -p "$dir/tree/scripts" "$dir/bin" "$dir/build/bin" "$dir/build/sim" "$dir/build/test/programs"
cp "$src/scripts/demo.sh" "$src/scripts/html_assets.sh" "$dir/tree/scripts/"
for d in view/html test/html test/tables; do
  mkdir -p "$dir/tree/$d" && echo '{}' > "$dir/tree/$d/package-lock.json"
done
# npm ci as npm 9 says it: one line on stdout, and the stamp html_assets.sh looks for.
cat > "$dir/bin/npm" <<'NPM'
#!/bin/sh
mkdir -p node_modules && : > node_modules/.package-lock.json && echo "added 3 packages in 1s"
NPM
printf '#!/bin/sh\necho "setup: noise on stdout"\nexec "$(dirname "$0")/html_assets.sh"\n' > "$dir/tree/scripts/setup.sh"
printf '#!/bin/sh\necho "cmake: noise on stdout"\n' > "$dir/bin/cmake"
printf '#!/bin/sh\necho "[1/1] ninja: noise on stdout"\n' > "$dir/bin/ninja"
# `run -o PATTERN -- ...` leaves a trace at PATTERN; `report` prints the report.
cat > "$dir/build/bin/cumemtrace" <<'CLI'
#!/bin/sh
case "$1" in
  run) echo "the traced program's own output"; : > "$(echo "$3" | sed 's/%p/1/')";;
  report) echo "THE REPORT"; echo "its last line";;
esac
CLI
chmod +x "$dir/bin/"* "$dir/tree/scripts/"* "$dir/build/bin/cumemtrace"

out=$(PATH="$dir/bin:$PATH" CUMEMTRACE_BUILD_DIR="$dir/build" CUMEMTRACE_DEMO_DIR="$dir/out" \
  "$dir/tree/scripts/demo.sh" 2>"$dir/err"); rc=$?
[ "$rc" = 0 ] || fail "demo.sh: exit status $rc: $(cat "$dir/err")"
[ "$out" = "THE REPORT
its last line" ] || fail "demo.sh's stdout is not the report alone: $out"
for line in "demo: 1/3 setting up" "setup: noise on stdout" "added 3 packages in 1s" "demo: 2/3 building" \
    "[1/1] ninja: noise on stdout" "demo: 3/3 tracing" "demo: traces of this run are in $dir/out/run-"; do
  grep -qF "$line" "$dir/err" || fail "demo.sh's stderr lacks '$line': $(cat "$dir/err")"
done
[ "$(grep -c 'added 3 packages in 1s' "$dir/err")" = 3 ] || fail "npm's lines: $(cat "$dir/err")"

# html_assets.sh alone, on a tree whose libraries are not installed yet: npm's lines on stderr.
rm -rf "$dir/tree/view/html/node_modules" "$dir/tree/test/html/node_modules" "$dir/tree/test/tables/node_modules"
out=$(PATH="$dir/bin:$PATH" "$dir/tree/scripts/html_assets.sh" 2>"$dir/err"); rc=$?
[ "$rc" = 0 ] && [ -z "$out" ] || fail "html_assets.sh: status $rc, stdout: $out"
[ "$(grep -c 'added 3 packages in 1s' "$dir/err")" = 3 ] || fail "html_assets.sh's stderr: $(cat "$dir/err")"
