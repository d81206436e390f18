// The sim-only extension of libcuda.so.1: how the sim NVML (and tests) read
// the simulated device state. Not part of any NVIDIA API; documented in
// docs/simulated-driver.md. Looked up with dlsym, so keep the signatures C.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

// SIMCUDA_DEVICES as the driver read it.
int simcuda_device_count(void);
// Live contexts of this process on the device (primary counts while retained).
int simcuda_device_context_count(int ordinal);
// Granules held by ordinary allocations, pools and VMM physical memory, in bytes.
unsigned long long simcuda_device_footprint_bytes(int ordinal);
// What NVML reports as this process's use: footprint + contexts * context
// bytes + hidden bytes (when at least one context is live).
unsigned long long simcuda_device_used_bytes(int ordinal);
// Test-only: forget all state and read SIMCUDA_* again, as in a fresh process.
void simcuda_reset(void);

typedef int (*simcuda_device_count_fn)(void);
typedef int (*simcuda_device_context_count_fn)(int);
typedef unsigned long long (*simcuda_device_bytes_fn)(int);

#ifdef __cplusplus
}
#endif
