// The calling thread's Python frames, for an event (docs/trace-format.md: PyFrame).
//
// Nothing here calls the interpreter or takes the GIL: the interpreter is found with
// dlsym(RTLD_DEFAULT, "_PyRuntime"/"Py_Version") (absent in a process without Python,
// which then costs one failed lookup per second at most), the thread's PyThreadState by
// walking the interpreters' thread lists for thread_id == pthread_self() (cached per
// thread, checked again at every use), its frames by python_walk.h. The frames of a
// thread stay put while it runs native code, which it is doing when it calls CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "stacks/python_walk.h"

namespace cumemtrace::interpose {

// Fills `out` with the calling thread's Python frames, lines not yet read (count 0: none, Python frames are
// off, or something did not validate). Call outside the tracker's lock.
void walk_python(PyRawStack& out);

// The calling thread's Python contexts (contextvars.Context), at most `cap`: the current
// one first, then the one that was current when it was entered (Context.run; asyncio runs
// each task's steps so), and so on out. 0 when it has none, Python frames are off, or the
// version's thread state is not known here (python_layout.h: tstate_context).
size_t python_contexts(uint64_t* out, size_t cap);

// In a fork child: a parent thread that was looking for the interpreter is not there.
void forget_python_look_after_fork();

// Reads the str at `p` (a code object's co_filename/co_name), "?" when unreadable.
std::string python_string(uint64_t p);

// The line of a frame walk_python found (-1 unknown), from its code's line table.
int32_t python_line(const PyRawFrame& f);

}  // namespace cumemtrace::interpose
