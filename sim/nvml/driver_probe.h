// What the sim NVML learns from the sim driver in this process.
//
// Real NVML asks the kernel driver, which knows every process's contexts. The
// sim's "kernel" is libcuda.so.1's state, reached through the simcuda_* hooks
// (sim/cuda/simcuda_hooks.h). The runtime dlopen()s the driver RTLD_LOCAL, so
// the hooks are not in the global scope: they are found with
// dlopen(RTLD_NOLOAD), which never loads the driver (and so never creates
// anything) when the program has not loaded it.
#pragma once

namespace simnvml {

struct DeviceUse {
    bool listed;                    // this process appears in the process list
    unsigned long long used_bytes;  // what NVML reports it using
};

// Use of `ordinal` by this process; {false, 0} when libcuda.so.1 is not loaded.
DeviceUse probe(int ordinal);

}  // namespace simnvml
