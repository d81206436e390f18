#!/usr/bin/env bash
# Installs what the build needs from Debian's packages and builds the one dependency
# Debian does not ship in a usable form: a position-independent static libunwind
# (Debian's libunwind.a is built without -fPIC, so it cannot go into a shared library;
# linking libunwind.so.8 instead would put its _Unwind_* exception-unwinding symbols
# in front of libgcc_s for every preloaded process). We rebuild Debian's own source
# package with -fPIC and hidden visibility, into .deps/, once.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
deps="$top/.deps"

packages=(cmake ninja-build g++ pkg-config dpkg-dev
  libspdlog-dev libfmt-dev catch2 libcli11-dev nlohmann-json3-dev
  libdw-dev libelf-dev libzstd-dev zlib1g-dev liblzma-dev libbz2-dev libunwind-dev libbenchmark-dev binutils
  libxxhash-dev clang libclang-rt-14-dev clang-format python3-pytest
  golang-go  # go tool pprof reads export --format pprof back (test/pprof)
  python3-pip python3-setuptools python3-wheel python3-venv  # the Python package's wheel, and its offline install test
  chromium)  # the browser that tests the html report (node and npm: scripts/html_assets.sh)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ ! -f "$deps/lib/libunwind.a" ]]; then
  echo "setup: building a PIC libunwind from Debian's source package into $deps" >&2
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # A private apt state so that adding deb-src entries touches nothing of the system's.
  # The source location is the machine's own: every `deb` entry of its configured apt
  # sources (one-line .list files and deb822 .sources files) is turned into `deb-src`.
  mkdir -p "$work/lists/partial" "$work/parts"
  : >"$work/src.list"
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f "$f" ]] && sed -nE 's/^[[:space:]]*deb([[:space:]])/deb-src\1/p' "$f" >>"$work/src.list"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] && sed -E 's/^Types:.*/Types: deb-src/' "$f" >"$work/parts/$(basename "$f")"
  done
  if [[ ! -s "$work/src.list" ]] && ! compgen -G "$work/parts/*.sources" >/dev/null; then
    echo "setup: no apt sources configured on this machine; cannot fetch libunwind's source" >&2
    exit 1
  fi
  apt_opts=(-o "Dir::Etc::SourceList=$work/src.list" -o "Dir::Etc::SourceParts=$work/parts"
    -o "Dir::State::Lists=$work/lists" -o APT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" update -qq
  (cd "$work" && apt-get "${apt_opts[@]}" source -qq libunwind >/dev/null 2>&1)
  src=$(find "$work" -maxdepth 1 -type d -name 'libunwind-*' | head -n1)
  [[ -n "$src" ]] || { echo "setup: could not fetch libunwind's source" >&2; exit 1; }
  (cd "$src" && ./configure -q --prefix="$deps" --disable-shared --enable-static \
      --disable-minidebuginfo --disable-zlibdebuginfo --disable-coredump --disable-ptrace \
      --disable-setjmp --disable-documentation --disable-tests \
      CFLAGS="-O2 -g -fPIC -fvisibility=hidden" &&
    make -s -j"$(nproc)" && make -s install) >"$work/build.log" 2>&1
  if [[ ! -f "$deps/lib/libunwind.a" ]]; then
    tail -n 30 "$work/build.log" >&2
    echo "setup: libunwind build failed" >&2
    exit 1
  fi
fi
"$top/scripts/html_assets.sh"
echo "setup: dependencies ready" >&2
