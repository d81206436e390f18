// The simcuda_* extension (see simcuda_hooks.h). These do not need cuInit:
// NVML asks whether or not the program ever initialised CUDA.
#include "driver_state.h"
#include "sim_export.h"
#include "simcuda_hooks.h"

using namespace sim;

SIM_API int simcuda_device_count(void) {
    SIM_LOCKED;
    return state().cfg.devices;
}

SIM_API int simcuda_device_context_count(int ordinal) {
    SIM_LOCKED;
    return valid_device(ordinal) ? state().devices[ordinal]->live_contexts : 0;
}

SIM_API unsigned long long simcuda_device_footprint_bytes(int ordinal) {
    SIM_LOCKED;
    return valid_device(ordinal) ? footprint_granules(ordinal) * kGranule : 0;
}

SIM_API unsigned long long simcuda_device_used_bytes(int ordinal) {
    SIM_LOCKED;
    return valid_device(ordinal) ? device_used_bytes(ordinal) : 0;
}

SIM_API void simcuda_reset(void) {
    SIM_LOCKED;
    reset_state();
}
