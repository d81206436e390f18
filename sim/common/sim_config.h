// The simulated hardware, as chosen by SIMCUDA_* environment variables.
// docs/simulated-driver.md lists the variables and their defaults.
#pragma once

#include <cstdint>

namespace sim {

struct Config {
    int devices;               // SIMCUDA_DEVICES
    uint64_t capacity;         // SIMCUDA_CAPACITY, bytes per device
    uint64_t context_bytes;    // SIMCUDA_CONTEXT_BYTES, device bytes per live context
    uint64_t hidden_bytes;     // SIMCUDA_HIDDEN_BYTES, per device with a live context
};

// Reads the environment now. The driver calls this once (and again only from
// the test-only simcuda_reset); NVML calls it at each nvmlInit.
Config read_config();

// Granule of physical device memory on the H200 (cuMemGetAllocationGranularity
// reports it; ordinary allocations are carved from it too).
constexpr uint64_t kGranule = 2ull << 20;

inline uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

}  // namespace sim
