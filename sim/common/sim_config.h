// The simulated hardware, as chosen by SIMCUDA_* environment variables.
// docs/simulated-driver.md lists the variables and their defaults.
#pragma once

#include <cstdint>
#include <optional>

namespace sim {

struct Config {
    int devices;               // SIMCUDA_DEVICES
    uint64_t capacity;         // SIMCUDA_CAPACITY, bytes per device
    uint64_t context_bytes;    // SIMCUDA_CONTEXT_BYTES, device bytes per live context
    uint64_t hidden_bytes;     // SIMCUDA_HIDDEN_BYTES, per device with a live context
    uint64_t other_bytes;      // SIMCUDA_OTHER_PROCESS_BYTES: another process holds this on every device
    uint32_t other_pid;        // SIMCUDA_OTHER_PROCESS_PID: its pid, as NVML lists it
    uint64_t nvml_delay_us;    // SIMNVML_DELAY_US: each NVML process listing takes this long
    uint64_t nvml_loader_us;   // SIMNVML_LOADER_US: ... and first holds the loader's list lock this long
    bool nvml_hang;            // SIMNVML_HANG=1: every NVML device query never returns
    const char *nvml_callers;  // SIMNVML_CALLERS: file each device query appends "PID TID\n" to, or null
};

// Reads the environment now. The driver calls this once (and again only from
// the test-only simcuda_reset); NVML calls it at each nvmlInit.
Config read_config();

// Granule of physical device memory on the H200 (cuMemGetAllocationGranularity
// reports it; ordinary allocations are carved from it too).
constexpr uint64_t kGranule = 2ull << 20;

// `v` rounded up to a multiple of `to`, or nothing when that does not fit in
// 64 bits. Sizes come straight from the application: cuMemAlloc(SIZE_MAX) once
// rounded to 0 and was handed the address of the next real allocation.
inline std::optional<uint64_t> round_up(uint64_t v, uint64_t to) {
    uint64_t r = v % to;
    if (r == 0) return v;
    if (v > UINT64_MAX - (to - r)) return std::nullopt;
    return v + (to - r);
}

// a * b, or nothing when it overflows (cuMemAllocPitch's pitch x height).
inline std::optional<uint64_t> multiply(uint64_t a, uint64_t b) {
    uint64_t product;
    if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
    return product;
}

// a + b, capped at UINT64_MAX: device use from absurd SIMCUDA_* settings.
inline uint64_t add_saturating(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

}  // namespace sim
