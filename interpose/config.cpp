#include "config.h"

#include <algorithm>
#include <cstdlib>

namespace cumemtrace::interpose {
namespace {

std::string env_string(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

uint64_t env_uint(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  return end && *end == '\0' ? n : fallback;
}

}  // namespace

const Config& config() {
  static const Config* c = [] {
    auto* k = new Config;  // leaked on purpose: read by hooks until the very end
    k->output_pattern = env_string("CUMEMTRACE_OUTPUT", "cumemtrace-%h-%p.trace");
    k->manifest = env_string("CUMEMTRACE_MANIFEST", "");
    k->stack_depth = static_cast<uint32_t>(std::min<uint64_t>(env_uint("CUMEMTRACE_DEPTH", 32), 256));
    k->snapshot_ms = static_cast<uint32_t>(env_uint("CUMEMTRACE_SNAPSHOT_MS", 1000));
    // The promise: a SIGKILLed process leaves a file readable up to <= 100 ms ago.
    k->flush_ms = static_cast<uint32_t>(std::clamp<uint64_t>(env_uint("CUMEMTRACE_FLUSH_MS", 100), 1, 100));
    k->granule_bytes = std::max<uint64_t>(env_uint("CUMEMTRACE_GRANULE", 2ull << 20), 1);
    k->buffer_limit_bytes = env_uint("CUMEMTRACE_BUFFER_MB", 256) << 20;
    k->disabled = env_uint("CUMEMTRACE_DISABLE", 0) != 0;
    k->log_level = env_string("CUMEMTRACE_LOG", "warn");
    return k;
  }();
  return *c;
}

}  // namespace cumemtrace::interpose
