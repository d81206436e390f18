// Where CPython keeps what a frame walk needs, per interpreter version.
//
// The hook reads the allocating thread's Python frames straight from memory, as py-spy
// and austin do from outside, because it may not take the GIL or call the interpreter
// (PyTorch calls cudaMalloc with the GIL released, under its allocator lock).
// 3.10, 3.11 and 3.12 publish no layout: their offsets below were taken with offsetof()
// from those versions' internal headers (3.10.13, 3.11.2, 3.12.1; the gilstate key's and
// _finalizing's of 3.11 from Debian's 3.11.2 and of 3.12 from Ubuntu 24.04's 3.12.3,
// examples/h200/tss_probe.sh). 3.13 publishes its own
// in _PyRuntime.debug_offsets (_Py_DebugOffsets), which is read at run time. Other
// versions get no Python frames.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cumemtrace::interpose {

inline constexpr int64_t kNoOffset = -1;

struct PyLayout {
  uint32_t version_hex = 0;  // PY_VERSION_HEX of the running interpreter
  // _PyRuntimeState → interpreters → thread states
  uint64_t runtime_interpreters_head = 0;
  uint64_t interp_next = 0;
  uint64_t interp_threads_head = 0;
  uint64_t tstate_next = 0;
  uint64_t tstate_thread_id = 0;  // pthread_t of the thread (pthread_self())
  // What lets a thread trust the thread state it found before without a system call
  // (python_frames.cpp says why that is sound); kNoOffset where not known (3.10, 3.13),
  // and those versions check by process_vm_readv on every event as before.
  int64_t runtime_finalizing = kNoOffset;   // _PyRuntimeState._finalizing
  int64_t runtime_main_interp = kNoOffset;  // _PyRuntimeState.interpreters.main
  int64_t runtime_tss_key = kNoOffset;      // the gilstate key: a Py_tss_t {int, pthread_key_t}
  int64_t tstate_interp = kNoOffset;        // PyThreadState.interp
  // PyThreadState.context: the thread's current contextvars.Context (NULL until one is
  // needed); kNoOffset where not known (3.10, and a 3.13 whose published thread-state
  // offsets are not where 3.13's header puts them), and tags then follow threads, not
  // contexts (docs/cli.md, 'Memory per range').
  int64_t tstate_context = kNoOffset;
  // PyContext.ctx_prev: the context current before this one was entered; after PyObject_HEAD
  // (two words) in 3.11, 3.12 and 3.13 (Include/internal/pycore_context.h).
  uint64_t context_prev = 16;
  // The thread's innermost frame: tstate->cframe->current_frame (3.11, 3.12), or
  // tstate->current_frame (3.13: tstate_cframe is kNoOffset).
  int64_t tstate_cframe = kNoOffset;
  uint64_t tstate_current_frame = 0;  // in the _PyCFrame when tstate_cframe is set
  // _PyInterpreterFrame
  uint64_t frame_code = 0;
  uint64_t frame_previous = 0;
  uint64_t frame_instr = 0;            // prev_instr (≤3.12) / instr_ptr (3.13)
  uint64_t frame_owner = 0;            // char
  int64_t frame_is_entry = kNoOffset;  // 3.11: char is_entry
  int owner_cstack = -1;               // 3.12+: owner of the shim frame each C-level entry pushes
  // 3.10: frames are PyFrameObjects (type-checked), frame_instr is f_lasti (int, in
  // instructions), every frame is its evaluation loop's own, and the line table is
  // 3.10's (address delta, line delta) pairs.
  bool frame_objects = false;
  uint64_t frame_bytes = 0;  // bytes to read to cover the fields above
  // PyCodeObject
  uint64_t code_filename = 0;
  uint64_t code_name = 0;
  uint64_t code_linetable = 0;
  uint64_t code_firstlineno = 0;  // int
  uint64_t code_adaptive = 0;     // co_code_adaptive: the bytecode, inside the object
  // co_version (uint32, 3.12+): a number CPython gives each new code object from a counter,
  // so that one made at a freed one's address (exec or compile in a loop) is told apart;
  // kNoOffset before 3.12. The counter stops at 0 once it wraps (then only addresses tell).
  int64_t code_version = kNoOffset;
  uint64_t code_bytes = 0;
  // PyObject / PyBytesObject / PyUnicodeObject
  uint64_t ob_type = 8;
  uint64_t bytes_size = 16;
  uint64_t bytes_data = 32;
  uint64_t unicode_length = 16;
  uint64_t unicode_state = 32;
  uint64_t unicode_ascii_bytes = 0;    // sizeof(PyASCIIObject): ASCII data follows
  uint64_t unicode_compact_bytes = 0;  // sizeof(PyCompactUnicodeObject): other compact data follows
  uint64_t unicode_utf8 = 0;           // PyCompactUnicodeObject.utf8 (may be NULL)
  uint64_t unicode_utf8_length = 0;
};

// The layout of a version with built-in offsets (3.10, 3.11, 3.12); false for any other.
bool builtin_layout(uint32_t version_hex, PyLayout& out);

// The layout described by a 3.13 _Py_DebugOffsets image (`bytes` long, read from the start
// of _PyRuntime); false when the cookie, version or size do not match 3.13.
bool layout_from_debug_offsets(const void* image, size_t bytes, PyLayout& out);

// Bytes of _Py_DebugOffsets that layout_from_debug_offsets reads.
size_t debug_offsets_bytes();

}  // namespace cumemtrace::interpose
