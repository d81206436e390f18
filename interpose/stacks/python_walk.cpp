#include "stacks/python_walk.h"

#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "base/utf8.h"

namespace cumemtrace::interpose {
namespace {

uint64_t u64_at(const uint8_t* p, uint64_t off) {
  uint64_t v;
  std::memcpy(&v, p + off, 8);
  return v;
}
int32_t i32_at(const uint8_t* p, uint64_t off) {
  int32_t v;
  std::memcpy(&v, p + off, 4);
  return v;
}

bool is_object_of(const PyLayout& l, uint64_t p, uint64_t type) {
  uint64_t ty = 0;
  return plausible_pointer(p) && type && read_own_memory(p + l.ob_type, &ty, 8) && ty == type;
}

// CPython's scan_varint / scan_signed_varint (Objects/codeobject.c, 3.11+): 6-bit groups,
// bit 6 continues; the sign in bit 0.
int32_t signed_varint(const uint8_t* p, size_t n) {
  uint32_t v = 0;
  for (uint32_t shift = 0, i = 0; i < n && shift < 32; ++i, shift += 6) {
    v |= uint32_t(p[i] & 63) << shift;
    if (!(p[i] & 64)) break;
  }
  return (v & 1) ? -int32_t(v >> 1) : int32_t(v >> 1);
}

// Pages that process_vm_readv read from lately. A system call per read cost 2 µs each
// on a Firecracker VM, 600 µs per event for a 20-frame stack: pages read once are then
// read with memcpy. What we read sits on pages that the frames of the calling thread keep
// alive (its frames, their code objects, their names and tables), so a page that was
// readable stays so while a pointer to it is still in the chain; the cache is forgotten
// every second all the same, so that a page unmapped since cannot be trusted for longer.
// Sanitizer builds always use the system call: memcpy of another object's bytes (a
// corrupted pointer in the fuzz test) is what ASan reports, and rightly so.
constexpr size_t kPageSlots = 4096;
std::atomic<uint64_t> g_pages[kPageSlots];  // page << 16 | epoch; 0 empty

uint64_t page_epoch() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (uint64_t(ts.tv_sec) & 0xFFFF) | 0x10000;  // never 0 in the low 17 bits
}
size_t page_slot(uint64_t page) { return size_t((page * 0x9E3779B97F4A7C15ull) >> 52) % kPageSlots; }
uint64_t page_entry(uint64_t page, uint64_t epoch) { return page << 17 | epoch; }

// getpid() is a system call too (glibc caches it no more): kept, and forgotten in a fork
// child (forget_own_pid). A vfork child never gets here (hooks only forward there).
std::atomic<pid_t> g_pid{0};

bool read_by_syscall(uint64_t address, void* out, size_t n) {
  pid_t pid = g_pid.load(std::memory_order_relaxed);
  if (!pid) g_pid.store(pid = getpid(), std::memory_order_relaxed);
  iovec local{out, n};
  iovec remote{reinterpret_cast<void*>(address), n};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == ssize_t(n);
}

bool plausible_range(uint64_t address, size_t n) {
  return address >= 4096 && address < (1ull << 47) && n <= (1ull << 47) - address;
}

// Whether every page of [address, address+n) was read by the system call lately. `memo`
// holds the last page found so (0: none): a thread's frames sit side by side in its data
// stack, so most frames of a walk are on the page the previous one was on.
[[gnu::always_inline]] inline bool pages_known(uint64_t epoch, uint64_t address, size_t n, uint64_t& memo) {
  const uint64_t first = address >> 12, last = (address + n - 1) >> 12;
  if (first == memo && last == memo) return true;  // most frames: the loop below was 700 of a walk's 3,450
  if (last - first >= 8) return false;
  for (uint64_t p = first; p <= last; ++p) {
    if (p == memo) continue;
    if (g_pages[page_slot(p)].load(std::memory_order_relaxed) != page_entry(p, epoch)) return false;
    memo = p;
  }
  return true;
}

void remember_pages(uint64_t epoch, uint64_t address, size_t n) {
  const uint64_t first = address >> 12, last = (address + n - 1) >> 12;
  for (uint64_t p = first; p <= last && p - first < 8; ++p)
    g_pages[page_slot(p)].store(page_entry(p, epoch), std::memory_order_relaxed);
}

// view_own_memory_in's way for pages not known yet: out of line, as it is rare.
[[gnu::noinline]] const uint8_t* view_by_syscall(uint64_t epoch, uint64_t address, size_t n, uint8_t* scratch) {
  if (!read_by_syscall(address, scratch, n)) return nullptr;
  remember_pages(epoch, address, n);
  return scratch;
}

// `n` bytes of this process at `address` to read fields from (nullptr: unreadable): the
// bytes where they are, when their pages are known readable (no copy: a copy of each
// frame and code object was a third of a walk's instructions), else a copy in `scratch`
// made by the system call, which checks them. Sanitizer builds always copy: reading
// another object's bytes in place is what ASan reports, and rightly so (a corrupted
// pointer in the fuzz test).
[[gnu::always_inline]] inline const uint8_t* view_own_memory_in(uint64_t epoch, uint64_t address, size_t n,
                                                                uint8_t* scratch, uint64_t& memo) {
  if (n == 0 || !plausible_range(address, n)) return nullptr;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)memo;
#else
  if (pages_known(epoch, address, n, memo)) return reinterpret_cast<const uint8_t*>(address);
#endif
  return view_by_syscall(epoch, address, n, scratch);
}

// read_own_memory with the page cache's epoch already read: a walk reads it once, not
// once per read (a clock read per read was a tenth of a 20-frame walk's instructions).
bool read_own_memory_in(uint64_t epoch, uint64_t address, void* out, size_t n) {
  if (n == 0) return true;
  uint64_t memo = 0;
  const uint8_t* v = view_own_memory_in(epoch, address, n, static_cast<uint8_t*>(out), memo);
  if (v && v != out) std::memcpy(out, v, n);
  return v != nullptr;
}

}  // namespace

bool read_own_memory(uint64_t address, void* out, size_t n) {
  return read_own_memory_in(page_epoch(), address, out, n);
}

void forget_own_pid() { g_pid.store(0, std::memory_order_relaxed); }

bool read_own_memory_checked(uint64_t address, void* out, size_t n) {
  if (n == 0) return true;
  return plausible_range(address, n) && read_by_syscall(address, out, n);
}

uint64_t innermost_frame(const PyLayout& l, uint64_t tstate) {
  if (!plausible_pointer(tstate)) return 0;
  uint64_t holder = tstate, frame = 0;
  const uint64_t epoch = page_epoch();
  if (l.tstate_cframe != kNoOffset) {  // 3.11/3.12: through the current _PyCFrame
    if (!read_own_memory_in(epoch, tstate + uint64_t(l.tstate_cframe), &holder, 8) || !plausible_pointer(holder))
      return 0;
  }
  if (!read_own_memory_in(epoch, holder + l.tstate_current_frame, &frame, 8)) return 0;
  return frame;
}

size_t context_chain(const PyLayout& l, const PyTypes& t, uint64_t tstate, uint64_t* out, size_t cap) {
  uint64_t ctx = 0;
  if (l.tstate_context == kNoOffset || !t.context || !plausible_pointer(tstate) ||
      !read_own_memory(tstate + uint64_t(l.tstate_context), &ctx, 8))
    return 0;
  size_t n = 0;
  // Each believed only as a Context: a freed one's type reads otherwise, and ends the chain.
  // Read as frames are, through the page cache: an event of a thread with tags reads two
  // words per context.
  while (n < cap && plausible_pointer(ctx)) {
    uint64_t type = 0;
    if (!read_own_memory(ctx + l.ob_type, &type, 8) || type != t.context) break;
    out[n++] = ctx;
    if (!read_own_memory(ctx + l.context_prev, &ctx, 8)) break;
  }
  return n;
}

bool walk_frames(const PyLayout& layout, const PyTypes& types, uint64_t frame, PyRawStack& out) {
  // Copies the compiler knows no store into `out` can change: read through the
  // references, every offset was loaded again after each field written (they might
  // alias): 255 instructions of a 22-frame walk's 3,700 (callgrind, bench/python_frames.py).
  const PyLayout l = layout;
  const PyTypes t = types;
  out.count = 0;
  out.truncated = false;
  uint8_t frame_copy[128], code_copy[256];
  if (l.frame_bytes > sizeof frame_copy || l.code_bytes > sizeof code_copy || !t.code) return false;
  // A chain longer than this is a loop (a corrupted `previous`), not a program.
  constexpr int kMaxSteps = 8192;
  const uint64_t epoch = page_epoch();
  uint64_t frame_page = 0, code_page = 0;  // pages_known's memo, one per kind of object
  uint64_t f = frame;
  // The code object at `code`, if it is one.
  auto code_at = [&](uint64_t code) -> const uint8_t* {
    const uint8_t* cb =
        plausible_pointer(code) ? view_own_memory_in(epoch, code, l.code_bytes, code_copy, code_page) : nullptr;
    return cb && u64_at(cb, l.ob_type) == t.code ? cb : nullptr;
  };
  for (int step = 0; f; ++step) {
    const uint8_t* fb = step < kMaxSteps && plausible_pointer(f)
                            ? view_own_memory_in(epoch, f, l.frame_bytes, frame_copy, frame_page)
                            : nullptr;
    if (!fb) return out.count = 0, false;
    const uint64_t previous = u64_at(fb, l.frame_previous);
    if (l.frame_objects) {  // 3.10: a PyFrameObject, run by an evaluation loop of its own
      if (u64_at(fb, l.ob_type) != t.frame) return out.count = 0, false;
      const int32_t lasti = i32_at(fb, l.frame_instr);
      const uint64_t code = u64_at(fb, l.frame_code);
      const uint8_t* cb = code_at(code);
      if (!cb) return out.count = 0, false;
      if (lasti >= 0 && lasti < (1 << 29)) {  // -1: not started
        if (out.count == PyRawStack::kMax) {
          out.truncated = true;
        } else {
          PyRawFrame& r = out.frames[out.count++];
          r = {code,
               u64_at(cb, l.code_filename),
               u64_at(cb, l.code_name),
               u64_at(cb, l.code_linetable),
               i32_at(cb, l.code_firstlineno),
               lasti * 2,
               0,
               true};
        }
      }
      f = previous;
      continue;
    }
    if (l.owner_cstack >= 0 && fb[l.frame_owner] == uint8_t(l.owner_cstack)) {
      // 3.12+: the shim an evaluation loop pushes on entry; the frame inside it is that
      // loop's first (an entry frame, as 3.11 marks with is_entry).
      if (out.count && !out.truncated) out.frames[out.count - 1].entry = true;
      f = previous;
      continue;
    }
    const uint64_t code = u64_at(fb, l.frame_code);
    const uint8_t* cb = code_at(code);
    if (!cb) return out.count = 0, false;
    const uint64_t instr = u64_at(fb, l.frame_instr), bytecode = code + l.code_adaptive;
    // A frame pushed but not started yet (3.11: prev_instr before the first instruction)
    // has no line: it is left out, as CPython leaves it out of tracebacks.
    if (instr >= bytecode && instr - bytecode < (1u << 30)) {
      if (out.count == PyRawStack::kMax) {
        out.truncated = true;
      } else {
        // Read whole before it is stored, for the reason `l` is a copy.
        const PyRawFrame r{code,
                           u64_at(cb, l.code_filename),
                           u64_at(cb, l.code_name),
                           u64_at(cb, l.code_linetable),
                           i32_at(cb, l.code_firstlineno),
                           int32_t(instr - bytecode),
                           l.code_version == kNoOffset ? 0u : uint32_t(i32_at(cb, uint64_t(l.code_version))),
                           l.frame_is_entry != kNoOffset && fb[l.frame_is_entry] != 0};
        out.frames[out.count++] = r;
      }
    } else if (instr >= (1ull << 47)) {
      return out.count = 0, false;
    }
    f = previous;
  }
  return true;
}

namespace {

// Lines are summed in 64 bits: a damaged table must not overflow an int (UBSan).
int32_t as_line(int64_t line) { return line >= 0 && line <= INT32_MAX ? int32_t(line) : -1; }

}  // namespace

int32_t line_from_location_table(const uint8_t* table, size_t n, int32_t firstlineno, int32_t offset) {
  if (offset < 0) return firstlineno;  // PyCode_Addr2Line's answer for "before the first"
  int64_t line = firstlineno;
  int64_t end = 0;
  for (size_t i = 0; i < n;) {
    const uint8_t b = table[i];
    if (!(b & 0x80)) return -1;  // not the start of an entry: not a location table
    const int code = (b >> 3) & 15;
    if (code == 13 || code == 14) line += signed_varint(table + i + 1, n - i - 1);
    else if (code >= 10 && code <= 12) line += code - 10;
    end += ((b & 7) + 1) * 2;
    if (offset < end) return code == 15 ? -1 : as_line(line);
    for (++i; i < n && !(table[i] & 0x80);) ++i;
  }
  return -1;
}

int32_t line_from_310_table(const uint8_t* table, size_t n, int32_t firstlineno, int32_t offset) {
  if (offset < 0) return firstlineno;
  int64_t line = firstlineno;
  int64_t end = 0;
  for (size_t i = 0; i + 1 < n; i += 2) {
    const int64_t start = end;
    end += table[i];
    const int8_t delta = int8_t(table[i + 1]);
    if (delta != -128) line += delta;
    if (offset >= start && offset < end) return delta == -128 ? -1 : as_line(line);
  }
  return -1;
}

int32_t read_line(const PyLayout& l, const PyTypes& t, const PyRawFrame& f) {
  if (!is_object_of(l, f.linetable, t.bytes)) return -1;
  int64_t size = 0;
  if (!read_own_memory(f.linetable + l.bytes_size, &size, 8) || size < 0 || size > (1 << 20)) return -1;
  uint8_t small[4096];
  std::vector<uint8_t> big;
  uint8_t* buf = small;
  if (size_t(size) > sizeof small) {
    big.resize(size_t(size));
    buf = big.data();
  }
  if (!read_own_memory(f.linetable + l.bytes_data, buf, size_t(size))) return -1;
  return l.frame_objects ? line_from_310_table(buf, size_t(size), f.firstlineno, f.offset)
                         : line_from_location_table(buf, size_t(size), f.firstlineno, f.offset);
}

int read_str(const PyLayout& l, const PyTypes& t, uint64_t p, char* out, size_t cap) {
  uint8_t h[128];
  if (l.unicode_compact_bytes > sizeof h || !is_object_of(l, p, t.unicode) ||
      !read_own_memory(p, h, l.unicode_compact_bytes))
    return -1;
  uint32_t state;
  std::memcpy(&state, h + l.unicode_state, 4);
  const int64_t length = int64_t(u64_at(h, l.unicode_length));
  const uint32_t kind = state >> 2 & 7;
  const bool compact = state >> 5 & 1, ascii = state >> 6 & 1;
  if (!compact || length < 0 || length > (1 << 20)) return -1;
  if (ascii) {
    const size_t n = size_t(length) < cap ? size_t(length) : cap;
    return read_own_memory(p + l.unicode_ascii_bytes, out, n) ? int(n) : -1;
  }
  const uint64_t utf8 = u64_at(h, l.unicode_utf8);
  const int64_t utf8_length = int64_t(u64_at(h, l.unicode_utf8_length));
  if (utf8 && utf8_length >= 0 && utf8_length <= (1 << 22)) {  // already encoded by CPython
    size_t n = size_t(utf8_length) < cap ? size_t(utf8_length) : cap;
    if (!read_own_memory(utf8, out, n)) return -1;
    if (n < size_t(utf8_length)) {  // cut short: drop the last, maybe partial, character
      while (n && (uint8_t(out[n - 1]) & 0xC0) == 0x80) --n;
      if (n) --n;
    }
    return int(n);
  }
  if (kind != 1 && kind != 2 && kind != 4) return -1;
  size_t n = 0;
  uint8_t chunk[256];
  const uint64_t data = p + l.unicode_compact_bytes;
  for (int64_t i = 0; i < length;) {
    const int64_t take = (length - i) * kind > int64_t(sizeof chunk) ? int64_t(sizeof chunk) / kind : length - i;
    if (!read_own_memory(data + uint64_t(i) * kind, chunk, size_t(take) * kind)) return -1;
    for (int64_t k = 0; k < take; ++k) {
      uint32_t c = kind == 1 ? chunk[k] : 0;
      if (kind == 2) std::memcpy(&c, chunk + 2 * k, 2), c &= 0xFFFF;
      if (kind == 4) std::memcpy(&c, chunk + 4 * k, 4);
      if (!put_utf8(c, out, cap, n)) return int(n);
    }
    i += take;
  }
  return int(n);
}

}  // namespace cumemtrace::interpose
