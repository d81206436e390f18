#include "stacks/python_layout.h"

#include <algorithm>
#include <cstring>

namespace cumemtrace::interpose {
namespace {

// Bytes to read of a struct to cover a field of `width` at each offset.
uint64_t cover(std::initializer_list<uint64_t> ends) { return std::max(ends); }

void finish(PyLayout& l) {
  l.frame_bytes = cover({l.frame_code + 8, l.frame_previous + 8, l.frame_instr + 8, l.frame_owner + 1, l.ob_type + 8,
                         l.frame_is_entry == kNoOffset ? 0 : uint64_t(l.frame_is_entry) + 1});
  l.code_bytes = cover({l.ob_type + 8, l.code_filename + 8, l.code_name + 8, l.code_linetable + 8,
                        l.code_firstlineno + 4, l.code_version == kNoOffset ? 0 : uint64_t(l.code_version) + 4});
}

// The start of CPython 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h, 3.13.0):
// every field after the cookie is a u64, so the mirror has no padding to get wrong.
struct DebugOffsets313 {
  char cookie[8];  // "xdebugpy"
  uint64_t version;
  uint64_t free_threaded;
  struct {
    uint64_t size, finalizing, interpreters_head;
  } runtime_state;
  struct {
    uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins, ceval_gil, gil_runtime_state,
        gil_runtime_state_enabled, gil_runtime_state_locked, gil_runtime_state_holder;
  } interpreter_state;
  struct {
    uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk, status;
  } thread_state;
  struct {
    uint64_t size, previous, executable, instr_ptr, localsplus, owner;
  } interpreter_frame;
  struct {
    uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames, localspluskinds,
        co_code_adaptive;
  } code_object;
  struct {
    uint64_t size, ob_type;
  } pyobject;
  struct {
    uint64_t size, tp_name, tp_repr, tp_flags;
  } type_object;
  struct {
    uint64_t size, ob_item, ob_size;
  } tuple_object;
  struct {
    uint64_t size, ob_item, ob_size;
  } list_object;
  struct {
    uint64_t size, ma_keys, ma_values;
  } dict_object;
  struct {
    uint64_t size, ob_fval;
  } float_object;
  struct {
    uint64_t size, lv_tag, ob_digit;
  } long_object;
  struct {
    uint64_t size, ob_size, ob_sval;
  } bytes_object;
  struct {
    uint64_t size, state, length, asciiobject_size;
  } unicode_object;
};

// An offset read from the process is believed only if it lies inside the struct it names.
bool inside(uint64_t offset, uint64_t size, uint64_t width) { return size <= 1 << 20 && offset + width <= size; }

}  // namespace

bool builtin_layout(uint32_t v, PyLayout& l) {
  l = PyLayout{};
  l.version_hex = v;
  const uint32_t minor = v >> 16;
  if (minor == 0x030A) {  // 3.10 (offsetof against 3.10.13's headers)
    l.runtime_interpreters_head = 32;
    l.interp_next = 0;
    l.interp_threads_head = 8;
    l.tstate_next = 8;
    l.tstate_thread_id = 176;
    l.tstate_cframe = kNoOffset;
    l.tstate_current_frame = 24;  // PyThreadState.frame
    l.frame_objects = true;
    l.frame_previous = 24;  // f_back
    l.frame_code = 32;
    l.frame_instr = 96;  // f_lasti
    l.frame_owner = 0;
    l.code_filename = 104;
    l.code_name = 112;
    l.code_linetable = 120;
    l.code_firstlineno = 40;
    l.unicode_ascii_bytes = 48;
    l.unicode_compact_bytes = 72;
    l.unicode_utf8_length = 48;
    l.unicode_utf8 = 56;
    finish(l);
    return true;
  }
  if (minor == 0x030B) {  // 3.11 (offsetof against Debian's 3.11.2 headers)
    l.runtime_interpreters_head = 40;
    l.interp_next = 0;
    l.interp_threads_head = 16;
    l.tstate_next = 8;
    l.tstate_thread_id = 152;
    l.runtime_finalizing = 24;
    l.runtime_main_interp = 48;
    l.runtime_tss_key = 592;  // gilstate.autoTSSkey
    l.tstate_interp = 16;
    l.tstate_context = 224;  // offsetof against Debian's 3.11.7 headers (PyThreadState is public in 3.11)
    l.tstate_cframe = 56;
    l.tstate_current_frame = 8;
    l.frame_code = 32;
    l.frame_previous = 48;
    l.frame_instr = 56;
    l.frame_is_entry = 68;
    l.frame_owner = 69;
    l.owner_cstack = -1;
    l.code_firstlineno = 72;
    l.code_adaptive = 184;
    l.unicode_ascii_bytes = 48;
    l.unicode_compact_bytes = 72;
    l.unicode_utf8_length = 48;
    l.unicode_utf8 = 56;
  } else if (minor == 0x030C) {  // 3.12 (offsetof against 3.12.1's headers)
    l.runtime_interpreters_head = 40;
    l.interp_next = 0;
    l.interp_threads_head = 72;
    l.tstate_next = 8;
    l.tstate_thread_id = 136;
    l.runtime_finalizing = 24;
    l.runtime_main_interp = 48;
    l.runtime_tss_key = 1544;  // autoTSSkey
    l.tstate_interp = 16;
    // PyThreadState (Include/cpython/pystate.h of the 3.12 line), by hand: prev 0, next 8,
    // interp 16, _status 24 (4 bytes), six ints 28..52, cframe 56, c_profilefunc 64,
    // c_tracefunc 72, c_profileobj 80, c_traceobj 88, current_exception 96, exc_info 104,
    // dict 112, gilstate_counter 120 (int, padded to 8), async_exc 128, thread_id 136,
    // native_thread_id 144, trash {int, pointer} 152..168, on_delete 168, on_delete_data 176,
    // coroutine_origin_tracking_depth 184 (int, padded), async_gen_firstiter 192,
    // async_gen_finalizer 200, context 208. Its cframe and thread_id are the offsetof values here.
    l.tstate_context = 208;
    l.tstate_cframe = 56;
    l.tstate_current_frame = 0;
    l.frame_code = 0;
    l.frame_previous = 8;
    l.frame_instr = 56;
    l.frame_owner = 70;
    l.owner_cstack = 3;  // FRAME_OWNED_BY_CSTACK
    l.code_firstlineno = 68;
    l.code_version = 92;
    l.code_adaptive = 192;
    l.unicode_ascii_bytes = 40;
    l.unicode_compact_bytes = 56;
    l.unicode_utf8_length = 40;
    l.unicode_utf8 = 48;
  } else {
    return false;
  }
  l.code_filename = 112;
  l.code_name = 120;
  l.code_linetable = 136;
  finish(l);
  return true;
}

size_t debug_offsets_bytes() { return sizeof(DebugOffsets313); }

bool layout_from_debug_offsets(const void* image, size_t bytes, PyLayout& l) {
  l = PyLayout{};
  DebugOffsets313 d;
  if (bytes < sizeof d) return false;
  std::memcpy(&d, image, sizeof d);
  if (std::memcmp(d.cookie, "xdebugpy", 8) != 0 || (d.version >> 16) != 0x030D || d.free_threaded) return false;
  const auto& ts = d.thread_state;
  const auto& fr = d.interpreter_frame;
  const auto& co = d.code_object;
  if (!inside(d.runtime_state.interpreters_head, d.runtime_state.size, 8) ||
      !inside(d.interpreter_state.next, d.interpreter_state.size, 8) ||
      !inside(d.interpreter_state.threads_head, d.interpreter_state.size, 8) || !inside(ts.next, ts.size, 8) ||
      !inside(ts.thread_id, ts.size, 8) || !inside(ts.current_frame, ts.size, 8) || !inside(fr.previous, fr.size, 8) ||
      !inside(fr.executable, fr.size, 8) || !inside(fr.instr_ptr, fr.size, 8) || !inside(fr.owner, fr.size, 1) ||
      !inside(co.filename, co.size, 8) || !inside(co.name, co.size, 8) || !inside(co.linetable, co.size, 8) ||
      !inside(co.firstlineno, co.size, 4) || !inside(co.co_code_adaptive, co.size, 2) ||
      !inside(d.pyobject.ob_type, d.pyobject.size, 8) || !inside(d.bytes_object.ob_size, d.bytes_object.size + 1, 8) ||
      d.bytes_object.ob_sval > 64 || !inside(d.unicode_object.state, d.unicode_object.asciiobject_size, 4) ||
      !inside(d.unicode_object.length, d.unicode_object.asciiobject_size, 8))
    return false;
  l.version_hex = uint32_t(d.version);
  l.runtime_interpreters_head = d.runtime_state.interpreters_head;
  l.interp_next = d.interpreter_state.next;
  l.interp_threads_head = d.interpreter_state.threads_head;
  l.tstate_next = ts.next;
  l.tstate_thread_id = ts.thread_id;
  l.tstate_cframe = kNoOffset;
  l.tstate_current_frame = ts.current_frame;
  l.frame_code = fr.executable;
  l.frame_previous = fr.previous;
  l.frame_instr = fr.instr_ptr;
  l.frame_owner = fr.owner;
  l.owner_cstack = 3;  // FRAME_OWNED_BY_CSTACK in 3.13 (Include/internal/pycore_frame.h)
  l.code_filename = co.filename;
  l.code_name = co.name;
  l.code_linetable = co.linetable;
  l.code_firstlineno = co.firstlineno;
  l.code_adaptive = co.co_code_adaptive;
  // co_version is not among 3.13's published offsets: 3.13.0's (offsetof), believed only
  // where the fields around it are where 3.13.0 has them.
  if (co.firstlineno == 68 && co.filename == 112 && inside(92, co.size, 4)) l.code_version = 92;
  // PyThreadState.context is not among 3.13's published offsets. By hand from 3.13's
  // Include/cpython/pystate.h: prev 0, next 8, interp 16, eval_breaker 24, _status 32
  // (4 bytes), eight ints 36..68, current_frame 72, c_profilefunc 80, c_tracefunc 88,
  // c_profileobj 96, c_traceobj 104, current_exception 112, exc_info 120, dict 128,
  // gilstate_counter 136 (int, padded to 8), async_exc 144, thread_id 152, native_thread_id 160,
  // delete_later 168, critical_section 176, coroutine_origin_tracking_depth 184 (int, padded),
  // async_gen_firstiter 192, async_gen_finalizer 200, context 208. Believed only where the
  // published current_frame and thread_id are where that arithmetic puts them; elsewhere tags
  // follow the thread (docs/cli.md, 'Memory per range').
  if (ts.current_frame == 72 && ts.thread_id == 152 && inside(208, ts.size, 8)) l.tstate_context = 208;
  l.ob_type = d.pyobject.ob_type;
  l.bytes_size = d.bytes_object.ob_size;
  l.bytes_data = d.bytes_object.ob_sval;
  l.unicode_state = d.unicode_object.state;
  l.unicode_length = d.unicode_object.length;
  l.unicode_ascii_bytes = d.unicode_object.asciiobject_size;
  // Not published in 3.13's offsets; the PyCompactUnicodeObject of 3.12 and 3.13 (offsetof, 3.13.0).
  l.unicode_compact_bytes = l.unicode_ascii_bytes + 16;
  l.unicode_utf8_length = l.unicode_ascii_bytes;
  l.unicode_utf8 = l.unicode_ascii_bytes + 8;
  finish(l);
  return true;
}

}  // namespace cumemtrace::interpose
