#include "driver_probe.h"

#include "simcuda_hooks.h"

#include <dlfcn.h>

namespace simnvml {

DeviceUse probe(int ordinal) {
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!driver) return {false, 0};
    auto contexts = reinterpret_cast<simcuda_device_context_count_fn>(dlsym(driver, "simcuda_device_context_count"));
    auto used = reinterpret_cast<simcuda_device_bytes_fn>(dlsym(driver, "simcuda_device_used_bytes"));
    DeviceUse use{false, 0};
    if (contexts && used) {
        use.used_bytes = used(ordinal);
        // Listed while a context lives, or while memory outlives its contexts
        // (pools and cuMemCreate memory survive cuCtxDestroy).
        use.listed = contexts(ordinal) > 0 || use.used_bytes > 0;
    }
    dlclose(driver);  // drops only the reference RTLD_NOLOAD added
    return use;
}

}  // namespace simnvml
