// Walking one thread's Python frames in its own process's memory, without the interpreter.
//
// Every byte is read with process_vm_readv on our own pid (read_own_memory), never by
// dereferencing: a pointer that is stale, torn or of a layout we got wrong then costs a
// failed read (EFAULT), never a SIGSEGV in the job. On top of that every object is
// checked before it is believed: its address must be aligned and in user space, its type
// pointer must be the interpreter's own PyCode_Type/PyUnicode_Type/PyBytes_Type, sizes
// must be bounded, and every loop has a fixed bound. Any mismatch ends the walk and the
// event gets no Python frames.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "stacks/python_layout.h"

namespace cumemtrace::interpose {

// Addresses of the interpreter's type objects, to recognise its objects.
struct PyTypes {
  uint64_t frame = 0;  // PyFrame_Type: needed for 3.10 only
  uint64_t code = 0;
  uint64_t unicode = 0;
  uint64_t bytes = 0;
  uint64_t context = 0;  // PyContext_Type
};

// One Python frame as found: the code object's fields and where in it the frame is.
// No default member initializers, on purpose: every hooked call puts a PyRawStack on
// its stack, and zeroing 128 frames (6 KiB) cost ~770 instructions per event, a third of
// the tracker's (callgrind, docs/performance.md). The walk sets every field of a frame
// it appends; only frames[0..count) are ever read.
struct PyRawFrame {
  uint64_t code;       // the code object
  uint64_t filename;   // its co_filename (str)
  uint64_t name;       // its co_name (str)
  uint64_t linetable;  // its co_linetable (bytes)
  int32_t firstlineno;
  int32_t offset;    // byte offset of the frame's instruction in the bytecode
  uint32_t version;  // its co_version (3.12+; 0 where the layout has none)
  // The first frame a C-level call of the evaluation loop ran (0 or 1). A word, not a
  // bool: no padding, so that frames compare as bytes (stack_memo.h compares an event's
  // frames with its thread's previous event's).
  uint32_t entry;
};
static_assert(sizeof(PyRawFrame) == 48 && std::has_unique_object_representations_v<PyRawFrame>);

struct PyRawStack {
  static constexpr uint32_t kMax = 128;  // deeper stacks keep their innermost kMax frames
  uint32_t count = 0;                    // innermost first
  bool truncated = false;
  PyRawFrame frames[kMax];
};

// Copies `n` bytes at `address` of this process into `out`; false if any is unreadable.
// Pages read lately are read directly (python_walk.cpp says when that is sound).
bool read_own_memory(uint64_t address, void* out, size_t n);
// The same, always through the system call: for pointers that may be stale (a cached
// thread state, another thread's list entries).
bool read_own_memory_checked(uint64_t address, void* out, size_t n);
// In a fork child: the pid the reads name is the parent's.
void forget_own_pid();

// A pointer that may name an object: nonzero, 8-byte aligned, in user space.
inline bool plausible_pointer(uint64_t p) { return p >= 4096 && p < (1ull << 47) && (p & 7) == 0; }

// The innermost frame of thread state `tstate` (0: none, or unreadable).
uint64_t innermost_frame(const PyLayout& l, uint64_t tstate);

// The contextvars.Context objects of thread state `tstate`, at most `cap`: its current one
// first, then the one current when that was entered (ctx_prev), and so on out. 0 where the
// layout has no tstate_context or the thread has no context yet.
size_t context_chain(const PyLayout& l, const PyTypes& t, uint64_t tstate, uint64_t* out, size_t cap);

// Walks from `frame` outwards. False (and count 0) when anything fails validation.
bool walk_frames(const PyLayout& l, const PyTypes& t, uint64_t frame, PyRawStack& out);

// Line of byte offset `offset` in a 3.11+ location table (co_linetable, PEP 657's format)
// of a code object starting at `firstlineno`; -1 where the table says "no line" or ends.
int32_t line_from_location_table(const uint8_t* table, size_t bytes, int32_t firstlineno, int32_t offset);

// The same for 3.10's line table: (address delta u8, line delta i8) pairs, -128 "no line".
int32_t line_from_310_table(const uint8_t* table, size_t bytes, int32_t firstlineno, int32_t offset);

// Reads the str object at `p` as UTF-8 into `out` (at most `cap` bytes, cut at a character
// boundary). Returns the byte count, or -1 when it is not a readable str.
int read_str(const PyLayout& l, const PyTypes& t, uint64_t p, char* out, size_t cap);

// The line of `f`: reads its linetable (at most 1 MiB) and decodes it. -1 when unknown.
int32_t read_line(const PyLayout& l, const PyTypes& t, const PyRawFrame& f);

}  // namespace cumemtrace::interpose
