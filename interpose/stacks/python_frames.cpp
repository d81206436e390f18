#include "stacks/python_frames.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <cerrno>

#include "base/config.h"
#include "base/loader_lock.h"
#include "base/log.h"
#include "resolve/resolve.h"
#include "base/thread_state.h"

namespace cumemtrace::interpose {
namespace {

struct PyRuntimeInfo {
  PyLayout layout;
  PyTypes types;
  uint64_t runtime = 0;  // &_PyRuntime
  int64_t tss_key = -1;  // the gilstate key's pthread key, when layout and runtime agree
};

std::atomic<const PyRuntimeInfo*> g_python{nullptr};
std::atomic<uint64_t> g_next_look_ns{0};
// One thread at a time looks; a flag, not a mutex, so that a fork child whose parent was
// looking can be let go of it (forget_python_look_after_fork).
std::atomic<bool> g_looking{false};

constexpr uint64_t kLookAgainNs = 1'000'000'000;  // a process without Python, yet
constexpr uint64_t kThreadAgainNs = 100'000'000;  // a thread without a thread state, yet

uint64_t coarse_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

uint64_t symbol(const char* name) {
  const LoaderUse in_loader;
  return reinterpret_cast<uint64_t>(real_dlsym()(RTLD_DEFAULT, name));
}

// The interpreter of this process, once it is there. Looks at most once a second, and
// never blocks: a thread that finds another looking goes on without Python frames.
const PyRuntimeInfo* python_runtime() {
  if (const PyRuntimeInfo* p = g_python.load(std::memory_order_acquire)) return p;
  const uint64_t now = coarse_now_ns();
  if (now < g_next_look_ns.load(std::memory_order_relaxed)) return nullptr;
  if (g_looking.exchange(true, std::memory_order_acquire)) return nullptr;
  struct Done {
    ~Done() { g_looking.store(false, std::memory_order_release); }
  } done;
  if (const PyRuntimeInfo* p = g_python.load(std::memory_order_acquire)) return p;
  g_next_look_ns.store(now + kLookAgainNs, std::memory_order_relaxed);
  PyRuntimeInfo info;
  info.runtime = symbol("_PyRuntime");
  const uint64_t version_at = symbol("Py_Version");  // 3.11+; 3.10 and older have none
  if (!info.runtime) return nullptr;                 // no Python here (yet)
  const uint64_t pattern = 0x9E3779B97F4A7C15ull;
  uint64_t probe = 0;
  if (!read_own_memory_checked(reinterpret_cast<uint64_t>(&pattern), &probe, sizeof probe) || probe != pattern) {
    // A seccomp profile that forbids process_vm_readv (older Docker defaults): say why
    // once, rather than leave every event without Python frames in silence.
    log_once_warn(
        "process_vm_readv on this process is refused (errno {}; a seccomp profile?): events get no "
        "Python frames",
        errno);
    g_next_look_ns.store(~0ull, std::memory_order_relaxed);
    return nullptr;
  }
  uint64_t version = 0;
  if (!version_at && symbol("Py_Is")) {
    version = 0x030A0000;  // 3.10 has no Py_Version; Py_Is is new in it
  } else if (!version_at || !read_own_memory(version_at, &version, sizeof version)) {
    log_once_warn("Python without Py_Version (3.9 or older): events get no Python frames");
    g_next_look_ns.store(~0ull, std::memory_order_relaxed);
    return nullptr;
  }
  bool known = builtin_layout(uint32_t(version), info.layout);
  if (!known && (version >> 16) == 0x030D) {
    uint8_t image[1024];
    known = debug_offsets_bytes() <= sizeof image && read_own_memory(info.runtime, image, debug_offsets_bytes()) &&
            layout_from_debug_offsets(image, debug_offsets_bytes(), info.layout);
  }
  info.types = {symbol("PyFrame_Type"), symbol("PyCode_Type"), symbol("PyUnicode_Type"), symbol("PyBytes_Type"),
                symbol("PyContext_Type")};
  if (!known || !info.types.code || !info.types.unicode || !info.types.bytes ||
      (info.layout.frame_objects && !info.types.frame)) {
    log_once_warn("Python {}.{}: its frame layout is not known here (3.10-3.13 are): events get no Python frames",
                  version >> 24, version >> 16 & 0xFF);
    g_next_look_ns.store(~0ull, std::memory_order_relaxed);
    return nullptr;
  }
  if (info.layout.runtime_tss_key != kNoOffset && info.layout.runtime_finalizing != kNoOffset &&
      info.layout.runtime_main_interp != kNoOffset) {
    uint32_t tss[2] = {0, 0};  // Py_tss_t: {int _is_initialized; pthread_key_t _key}
    if (read_own_memory_checked(info.runtime + uint64_t(info.layout.runtime_tss_key), tss, sizeof tss) && tss[0] == 1 &&
        tss[1] < PTHREAD_KEYS_MAX)
      info.tss_key = tss[1];
  }
  auto* kept = new PyRuntimeInfo(info);  // lives until exit: hooks may use it at any time
  g_python.store(kept, std::memory_order_release);
  log_info("Python {}.{}: recording Python frames (CUMEMTRACE_PYTHON=0 turns it off)", version >> 24,
           version >> 16 & 0xFF);
  return kept;
}

bool thread_state_is_ours(const PyLayout& l, uint64_t tstate, uint64_t self) {
  uint64_t id = 0;
  return plausible_pointer(tstate) && read_own_memory_checked(tstate + l.tstate_thread_id, &id, 8) && id == self;
}

// The gilstate key's value for this thread, and whether the interpreter is not
// finalizing: together they tell whether a state this thread found before is still
// alive, without a system call. CPython (3.11, 3.12: tstate_delete_common) clears the calling thread's gilstate key
// before it frees that thread's state, and outside finalization a thread's state is
// freed by that thread; finalization (zapthreads) frees every thread's state without
// clearing their keys, but only after setting _finalizing, and a subinterpreter's end does
// the same to its threads, so only a state of the main interpreter is trusted this way
// (thread_state_is_keyed). pthread_getspecific (key_value) reads this thread's own key table. What
// this cannot see: a program that frees another, still running thread's state with
// PyThreadState_Delete (CPython then clears the deleting thread's key, not the owner's).
uint64_t key_value(const PyRuntimeInfo& py) {
  return reinterpret_cast<uint64_t>(pthread_getspecific(pthread_key_t(py.tss_key)));
}

bool not_finalizing(const PyRuntimeInfo& py) {
  uint64_t finalizing = 1;
  return read_own_memory(py.runtime + uint64_t(py.layout.runtime_finalizing), &finalizing, 8) && finalizing == 0;
}

bool thread_state_is_keyed(const PyRuntimeInfo& py, uint64_t interp, uint64_t tstate) {
  uint64_t main_interp = 0;
  return py.tss_key >= 0 &&
         read_own_memory_checked(py.runtime + uint64_t(py.layout.runtime_main_interp), &main_interp, 8) &&
         main_interp == interp && key_value(py) == tstate && not_finalizing(py);
}

// Caches `tstate` (of `interp`) as the thread's state found.
uint64_t adopt(const PyRuntimeInfo& py, ThreadState& t, uint64_t interp, uint64_t tstate) {
  t.py_tstate_keyed = thread_state_is_keyed(py, interp, tstate);
  log_debug("thread {}: Python thread state found, checked from now on {}", t.tid,
            t.py_tstate_keyed ? "through the gilstate key" : "by process_vm_readv on every event");
  return t.py_tstate = tstate;
}

enum class Found { kYes, kNo, kTorn };

// Looks for this thread's state in the interpreters' thread lists, read while other
// threads may change them: a read that fails is a torn list (a state freed under us).
Found find_in_lists(const PyRuntimeInfo& py, uint64_t self, uint64_t& tstate, uint64_t& interp) {
  const PyLayout& l = py.layout;
  if (!read_own_memory_checked(py.runtime + l.runtime_interpreters_head, &interp, 8)) return Found::kTorn;
  for (int i = 0; i < 256 && plausible_pointer(interp); ++i) {
    uint64_t ts = 0;
    if (!read_own_memory_checked(interp + l.interp_threads_head, &ts, 8)) return Found::kTorn;
    for (int k = 0; k < 65536 && plausible_pointer(ts); ++k) {
      if (thread_state_is_ours(l, ts, self)) return tstate = ts, Found::kYes;
      if (!read_own_memory_checked(ts + l.tstate_next, &ts, 8)) return Found::kTorn;
    }
    if (!read_own_memory_checked(interp + l.interp_next, &interp, 8)) return Found::kTorn;
  }
  return Found::kNo;
}

// This thread's PyThreadState: the cached one while the gilstate key still holds it
// (key_value) or, where that cannot be told, while its thread_id is still ours (a
// process_vm_readv per event); else found again in the thread lists. A thread with none
// looks again 100 ms later, or at once when the gilstate key shows a new state bound.
uint64_t our_thread_state(const PyRuntimeInfo& py) {
  const PyLayout& l = py.layout;
  ThreadState& t = thread_state();
  const uint64_t self = uint64_t(pthread_self());
  if (py.tss_key >= 0) {
    const uint64_t bound = key_value(py);
    if (t.py_tstate && t.py_tstate_keyed) {
      if (bound == t.py_tstate && not_finalizing(py)) return t.py_tstate;
      // The key let go of it (freed, or unbound): its thread_id could still read as ours.
      t.py_tstate = 0;
      t.py_look_again_ns = 0;
    } else if (bound && bound != t.py_key_seen) {
      t.py_look_again_ns = 0;
    }
    t.py_key_seen = bound;
  }
  if (t.py_tstate && thread_state_is_ours(l, t.py_tstate, self)) return t.py_tstate;
  t.py_tstate = 0;
  t.py_tstate_keyed = false;
  if (const uint64_t bound = t.py_key_seen; bound && l.tstate_interp != kNoOffset) {
    // The key names this thread's live state: no walk of lists other threads are changing
    // (walks torn by thread churn left 0.1-0.8 % of a foreign thread's callbacks without
    // frames in the attack run). Checked as a walk's find is.
    uint64_t interp = 0;
    if (thread_state_is_ours(l, bound, self) &&
        read_own_memory_checked(bound + uint64_t(l.tstate_interp), &interp, 8)) {
      return adopt(py, t, interp, bound);
    }
  }
  const uint64_t now = coarse_now_ns();
  if (now < t.py_look_again_ns) return 0;
  // A torn list is looked at again at once, a few times: waiting 100 ms left a short-lived
  // thread's every event without Python frames (test "Python frames from 80 threads").
  for (int attempt = 0; attempt < 4; ++attempt) {
    uint64_t ts = 0, interp = 0;
    const Found found = find_in_lists(py, self, ts, interp);
    if (found == Found::kYes) { return adopt(py, t, interp, ts); }
    if (found == Found::kNo) break;
  }
  t.py_look_again_ns = now + kThreadAgainNs;
  return 0;
}

}  // namespace

void forget_python_look_after_fork() { g_looking.store(false, std::memory_order_relaxed); }

void walk_python(PyRawStack& out) {
  out.count = 0;
  out.truncated = false;
  if (!config().python) return;
  const PyRuntimeInfo* py = python_runtime();
  if (!py) return;
  const uint64_t tstate = our_thread_state(*py);
  if (!tstate) return;
  const uint64_t frame = innermost_frame(py->layout, tstate);
  if (!frame) return;
  walk_frames(py->layout, py->types, frame, out);
}

size_t python_contexts(uint64_t* out, size_t cap) {
  if (!config().python) return 0;
  const PyRuntimeInfo* py = python_runtime();
  if (!py || py->layout.tstate_context == kNoOffset || !py->types.context) return 0;
  const uint64_t tstate = our_thread_state(*py);
  return tstate ? context_chain(py->layout, py->types, tstate, out, cap) : 0;
}

int32_t python_line(const PyRawFrame& f) {
  const PyRuntimeInfo* py = g_python.load(std::memory_order_acquire);
  return py ? read_line(py->layout, py->types, f) : -1;
}

std::string python_string(uint64_t p) {
  const PyRuntimeInfo* py = g_python.load(std::memory_order_acquire);
  char buf[512];
  const int n = py ? read_str(py->layout, py->types, p, buf, sizeof buf) : -1;
  return n < 0 ? std::string("?") : std::string(buf, size_t(n));
}

}  // namespace cumemtrace::interpose
