#!/bin/sh
# scripts/check_format.sh on a repository of two files, one in the house style and one
# not: exit status 1 and exactly the line that names the second; after --fix, status 0.
set -u
check="$1"; style="$2"
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
cd "$dir" && git init -q . && cp "$style" .clang-format
printf 'int f(int x) { return x + 1; }\n' > good.cpp
printf 'int  g( int x ){\nreturn x;}\n' > bad.cpp
git add . >/dev/null
out=$("$check" "$dir"); rc=$?
[ "$rc" = 1 ] || { echo "exit status $rc, not 1"; exit 1; }
[ "$out" = "bad.cpp: differs from .clang-format (scripts/check_format.sh --fix rewrites it)" ] || { echo "output: $out"; exit 1; }
"$check" --fix "$dir" && "$check" "$dir" || { echo "still differs after --fix"; exit 1; }
[ "$(cat bad.cpp)" = "int g(int x) { return x; }" ] || { echo "fixed to: $(cat bad.cpp)"; exit 1; }
