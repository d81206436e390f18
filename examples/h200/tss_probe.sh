#!/usr/bin/env bash
# Prints, for the python3 on PATH, the offsets in _PyRuntimeState that
# interpose/stacks/python_layout.cpp keeps per version for the thread-state check without a system
# call: interpreters.main, _finalizing and the gilstate key (autoTSSkey; 3.11:
# gilstate.autoTSSkey), and from 3.12 the code object's co_version (which tells a code
# object made at a freed one's address from it). Needs the interpreter's internal headers (python3.X-dev) and gcc.
# Scanning _PyRuntime for the key's value instead does not work: CPython's key is usually
# pthread key 0, and {1, 0} is everywhere in that struct.
set -eu
py=${PYTHON:-python3}
inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
minor=$("$py" -c 'import sys; print(sys.version_info[1])')
key=autoTSSkey
[[ $minor == 11 ]] && key=gilstate.autoTSSkey
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/p.c" <<C
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_runtime.h>
#include <stddef.h>
#include <stdio.h>
int main(void) {
  printf("python %s: interpreters.main %zu _finalizing %zu interpreters.head %zu $key %zu\n", PY_VERSION,
         offsetof(_PyRuntimeState, interpreters.main), offsetof(_PyRuntimeState, _finalizing),
         offsetof(_PyRuntimeState, interpreters.head), offsetof(_PyRuntimeState, $key));
#if PY_VERSION_HEX >= 0x030C0000
  printf("python %s: PyCodeObject.co_version %zu co_filename %zu co_firstlineno %zu\n", PY_VERSION,
         offsetof(PyCodeObject, co_version), offsetof(PyCodeObject, co_filename), offsetof(PyCodeObject, co_firstlineno));
#endif
  return 0;
}
C
gcc -I"$inc" "$work/p.c" -o "$work/p"
"$work/p"
