#include "sim_config.h"

#include <cstdio>
#include <cstdlib>
#include <cerrno>

namespace sim {
namespace {

// A malformed value is a broken test setup, not something to guess around:
// say so on stderr and keep the default, so the run still shows the mistake.
uint64_t env_u64(const char *name, uint64_t fallback) {
    const char *text = std::getenv(name);
    if (!text || !*text) return fallback;
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(text, &end, 0);
    if (errno || *end) {
        std::fprintf(stderr, "simcuda: ignoring %s=%s (not a number)\n", name, text);
        return fallback;
    }
    return v;
}

}  // namespace

Config read_config() {
    Config c;
    c.devices = static_cast<int>(env_u64("SIMCUDA_DEVICES", 1));
    if (c.devices < 0 || c.devices > 64) c.devices = 1;
    // 140.4 GiB: what cuDeviceTotalMem reports on the H200 we measured.
    c.capacity = env_u64("SIMCUDA_CAPACITY", 150754820096ull);
    c.context_bytes = env_u64("SIMCUDA_CONTEXT_BYTES", 512ull << 20);
    c.hidden_bytes = env_u64("SIMCUDA_HIDDEN_BYTES", 0);
    c.other_bytes = env_u64("SIMCUDA_OTHER_PROCESS_BYTES", 0);
    c.other_pid = static_cast<uint32_t>(env_u64("SIMCUDA_OTHER_PROCESS_PID", 4242));
    c.nvml_delay_us = env_u64("SIMNVML_DELAY_US", 0);
    c.nvml_loader_us = env_u64("SIMNVML_LOADER_US", 0);
    c.nvml_hang = env_u64("SIMNVML_HANG", 0) != 0;
    const char *callers = std::getenv("SIMNVML_CALLERS");
    c.nvml_callers = callers && *callers ? callers : nullptr;
    return c;
}

}  // namespace sim
