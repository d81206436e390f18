#include "base/config.h"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/errno_guard.h"

namespace cumemtrace::interpose {
namespace {

// Straight to stderr: the logger itself is configured from here (CUMEMTRACE_LOG).
void warn_config(const char* name, const char* value, const char* what) {
  char line[512];
  const int n =
      std::snprintf(line, sizeof line, "cumemtrace[%d]: warning: %s=\"%.200s\" %s\n", int(getpid()), name, value, what);
  if (n > 0 && write(STDERR_FILENO, line, std::min<size_t>(size_t(n), sizeof line - 1)) < 0)
    return;  // nowhere to say it
}

std::string env_string(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// A decimal number in [lo, hi]; anything else warns and takes the fallback or the bound.
uint64_t env_number(const char* name, uint64_t fallback, uint64_t lo, uint64_t hi) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (*v == '-' || errno == ERANGE || !end || *end != '\0') {
    warn_config(name, v, "is not a number in range; the default is used");
    return fallback;
  }
  if (n < lo || n > hi) {
    warn_config(name, v,
                n < lo ? "is below the smallest value allowed; that is used"
                       : "is above the largest value allowed; that is used");
    return n < lo ? lo : hi;
  }
  return n;
}

bool env_flag(const char* name, bool fallback = false) {
  const std::string v = env_string(name, fallback ? "1" : "");
  for (const char* yes : {"1", "true", "yes", "on"})
    if (strcasecmp(v.c_str(), yes) == 0) return true;
  for (const char* no : {"", "0", "false", "no", "off"})
    if (strcasecmp(v.c_str(), no) == 0) return false;
  warn_config(name, v.c_str(),
              fallback ? "is not one of 1/0, true/false, yes/no, on/off; taken as on"
                       : "is not one of 1/0, true/false, yes/no, on/off; taken as off");
  return fallback;
}

std::string env_log_level(const char* name) {
  const std::string v = env_string(name, "warn");
  for (const char* level : {"trace", "debug", "info", "warn", "warning", "err", "error", "critical", "off"})
    if (v == level) return v;
  warn_config(name, v.c_str(), "is not a log level (off, error, warn, info, debug, trace); warn is used");
  return "warn";
}

}  // namespace

const Config& config() {
  static const Config* c = [] {
    const ErrnoGuard keep_errno;
    auto* k = new Config;  // leaked on purpose: read by hooks until the very end
    k->output_pattern = env_string("CUMEMTRACE_OUTPUT", kDefaultOutputPattern);
    k->manifest = env_string("CUMEMTRACE_MANIFEST", "");
    k->stack_depth = uint32_t(env_number("CUMEMTRACE_DEPTH", 32, 0, 256));
    // Where Python frames name the line, the native frames past the innermost few are
    // mostly the framework's dispatch and the interpreter, each costing the hook ~100
    // instructions; fewer of them is the user's choice (the rotated H200 step ratio could
    // not tell 8 from 32 apart: docs/validation.md section 17), so the default is DEPTH's.
    k->python_native_depth = uint32_t(env_number("CUMEMTRACE_DEPTH_WITH_PYTHON", k->stack_depth, 0, 256));
    // A tensor's block event comes from inside the caching allocator: its innermost native
    // frames are the allocator's and the framework's dispatch, the Python frames name the
    // line, and the native walk was most of a CPU-bound step's cost (docs/performance.md,
    // "Block events inside PyTorch's cache"). Four frames still name the allocator's library.
    k->block_native_depth = uint32_t(
        env_number("CUMEMTRACE_BLOCK_DEPTH_WITH_PYTHON", std::min<uint32_t>(4, k->python_native_depth), 0, 256));
    k->snapshot_ms = uint32_t(env_number("CUMEMTRACE_SNAPSHOT_MS", 1000, 0, 86'400'000));
    // A SIGKILLed process leaves a file readable up to <= 100 ms ago (README, CUMEMTRACE_FLUSH_MS).
    k->flush_ms = uint32_t(env_number("CUMEMTRACE_FLUSH_MS", 100, 1, 100));
    // A real NVML answers in 0.2-0.8 ms (docs/validation.md section 16); a slow one must
    // not hold up the job (docs/capture-and-fork.md, "A slow or hung NVML"), so a program's
    // thread waits this long at most.
    k->nvml_wait_ms = uint32_t(env_number("CUMEMTRACE_NVML_WAIT_MS", 100, 0, 60'000));
    k->granule_bytes = env_number("CUMEMTRACE_GRANULE", 2ull << 20, 1, 1ull << 30);
    k->buffer_limit_bytes = env_number("CUMEMTRACE_BUFFER_MB", 256, 1, 1 << 16) << 20;
    k->disabled = env_flag("CUMEMTRACE_DISABLE");
    k->python = env_flag("CUMEMTRACE_PYTHON", true);
    // Off by default: no report reads a free's stack, and unwinding it doubled the cost of
    // a job whose every free reaches the driver (cudaMallocAsync; docs/performance.md).
    k->free_stacks = env_flag("CUMEMTRACE_FREE_STACKS", false);
    k->check_stacks = env_flag("CUMEMTRACE_CHECK_STACKS", false);
    k->stack_stats = env_flag("CUMEMTRACE_STACK_STATS", false);
    k->compress = env_flag("CUMEMTRACE_COMPRESS", true);
    k->blocks = env_flag("CUMEMTRACE_BLOCKS", true);
    k->log_level = env_log_level("CUMEMTRACE_LOG");
    return k;
  }();
  return *c;
}

}  // namespace cumemtrace::interpose
