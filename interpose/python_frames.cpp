#include "python_frames.h"

#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <mutex>

#include "config.h"
#include "loader_lock.h"
#include "log.h"
#include "resolve.h"
#include "thread_state.h"

namespace cumemtrace::interpose {
namespace {

struct PyRuntimeInfo {
  PyLayout layout;
  PyTypes types;
  uint64_t runtime = 0;  // &_PyRuntime
};

std::atomic<const PyRuntimeInfo*> g_python{nullptr};
std::atomic<uint64_t> g_next_look_ns{0};
std::mutex g_look_mu;  // trivially destructible in libstdc++: safe at exit

constexpr uint64_t kLookAgainNs = 1'000'000'000;   // a process without Python, yet
constexpr uint64_t kThreadAgainNs = 100'000'000;   // a thread without a thread state, yet

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
  std::unique_lock lock(g_look_mu, std::try_to_lock);
  if (!lock) return nullptr;
  if (const PyRuntimeInfo* p = g_python.load(std::memory_order_acquire)) return p;
  g_next_look_ns.store(now + kLookAgainNs, std::memory_order_relaxed);
  PyRuntimeInfo info;
  info.runtime = symbol("_PyRuntime");
  const uint64_t version_at = symbol("Py_Version");  // 3.11+; 3.10 and older have none
  if (!info.runtime) return nullptr;                   // no Python here (yet)
  const uint64_t pattern = 0x9E3779B97F4A7C15ull;
  uint64_t probe = 0;
  if (!read_own_memory_checked(reinterpret_cast<uint64_t>(&pattern), &probe, sizeof probe) || probe != pattern) {
    // A seccomp profile that forbids process_vm_readv (older Docker defaults): say why
    // once, rather than leave every event without Python frames in silence.
    log_once_warn("process_vm_readv on this process is refused (errno {}; a seccomp profile?): events get no "
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
  info.types = {symbol("PyFrame_Type"), symbol("PyCode_Type"), symbol("PyUnicode_Type"), symbol("PyBytes_Type")};
  if (!known || !info.types.code || !info.types.unicode || !info.types.bytes ||
      (info.layout.frame_objects && !info.types.frame)) {
    log_once_warn("Python {}.{}: its frame layout is not known here (3.10-3.13 are): events get no Python frames",
                  version >> 24, version >> 16 & 0xFF);
    g_next_look_ns.store(~0ull, std::memory_order_relaxed);
    return nullptr;
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

// This thread's PyThreadState: the cached one while its thread_id is still ours, else
// found again in the interpreters' thread lists (read while other threads may change
// them: a torn list ends the search, and the thread looks again 100 ms later).
uint64_t our_thread_state(const PyRuntimeInfo& py) {
  const PyLayout& l = py.layout;
  ThreadState& t = thread_state();
  const uint64_t self = uint64_t(pthread_self());
  if (t.py_tstate && thread_state_is_ours(l, t.py_tstate, self)) return t.py_tstate;
  t.py_tstate = 0;
  const uint64_t now = coarse_now_ns();
  if (now < t.py_look_again_ns) return 0;
  t.py_look_again_ns = now + kThreadAgainNs;
  uint64_t interp = 0;
  if (!read_own_memory_checked(py.runtime + l.runtime_interpreters_head, &interp, 8)) return 0;
  for (int i = 0; i < 256 && plausible_pointer(interp); ++i) {
    uint64_t ts = 0;
    if (!read_own_memory_checked(interp + l.interp_threads_head, &ts, 8)) return 0;
    for (int k = 0; k < 65536 && plausible_pointer(ts); ++k) {
      if (thread_state_is_ours(l, ts, self)) return t.py_tstate = ts;
      if (!read_own_memory_checked(ts + l.tstate_next, &ts, 8)) return 0;
    }
    if (!read_own_memory_checked(interp + l.interp_next, &interp, 8)) return 0;
  }
  return 0;
}

}  // namespace

void capture_python(PyRawStack& out) {
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
