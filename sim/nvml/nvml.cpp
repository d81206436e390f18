// The sim NVML: device identity from the SIMCUDA_* configuration, and this
// process's memory use from the sim driver (driver_probe.h). Only the calling
// process can ever be listed: the sim has no other processes to see.
#include "driver_probe.h"
#include "nvml_types.h"
#include "sim_config.h"
#include "sim_export.h"
#include "sim_uuid.h"

#include <fcntl.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>

namespace {

constexpr int kMaxDevices = 64;
struct nvmlDeviceSlot {
    int ordinal;
};
nvmlDeviceSlot g_slots[kMaxDevices];

std::mutex g_mutex;
int g_init_count = 0;  // nvmlInit/nvmlShutdown nest, as in real NVML
sim::Config g_config;

bool initialized() {
    std::lock_guard<std::mutex> lock(g_mutex);
    return g_init_count > 0;
}

nvmlReturn_t device_ordinal(nvmlDevice_t device, int *ordinal) {
    if (!initialized()) return NVML_ERROR_UNINITIALIZED;
    auto *slot = reinterpret_cast<nvmlDeviceSlot *>(device);
    if (slot < g_slots || slot >= g_slots + g_config.devices) return NVML_ERROR_INVALID_ARGUMENT;
    *ordinal = slot->ordinal;
    return NVML_SUCCESS;
}

// As a real NVML that loads a library on first use: glibc holds its list of loaded
// objects locked while dl_iterate_phdr runs its callback.
void hold_loader(uint64_t us) {
    dl_iterate_phdr(
        [](dl_phdr_info *, size_t, void *arg) {
            usleep(static_cast<useconds_t>(*static_cast<uint64_t *>(arg)));
            return 1;
        },
        &us);
}

// What a device query does before it answers: says which thread asked (so a test can tell
// that no program thread ever waits on NVML), and hangs when asked to, as an NVML stuck in
// a kernel driver call does.
void enter_query() {
    if (g_config.nvml_callers) {
        char line[48];
        const int n = std::snprintf(line, sizeof line, "%d %ld\n", int(getpid()), long(syscall(SYS_gettid)));
        const int fd = open(g_config.nvml_callers, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0) {
            if (write(fd, line, size_t(n)) != n) std::fprintf(stderr, "simnvml: cannot write SIMNVML_CALLERS\n");
            close(fd);
        }
    }
    while (g_config.nvml_hang) sleep(1000);
}

nvmlReturn_t running_processes(nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos) {
    int ordinal;
    if (nvmlReturn_t r = device_ordinal(device, &ordinal)) return r;
    if (!infoCount) return NVML_ERROR_INVALID_ARGUMENT;
    enter_query();
    if (g_config.nvml_loader_us) hold_loader(g_config.nvml_loader_us);
    if (g_config.nvml_delay_us) usleep(static_cast<useconds_t>(g_config.nvml_delay_us));
    simnvml::DeviceUse use = simnvml::probe(ordinal);
    const bool other = g_config.other_bytes > 0;
    unsigned int needed = (use.listed ? 1 : 0) + (other ? 1 : 0);
    // As documented: too small a buffer (or none) reports the count needed.
    if (*infoCount < needed || (needed && !infos)) {
        *infoCount = needed;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *infoCount = needed;
    unsigned int i = 0;
    if (other)
        infos[i++] = nvmlProcessInfo_t{g_config.other_pid, g_config.other_bytes, NVML_VALUE_NOT_AVAILABLE,
                                       NVML_VALUE_NOT_AVAILABLE};
    if (use.listed)
        infos[i++] =
            nvmlProcessInfo_t{unsigned(getpid()), use.used_bytes, NVML_VALUE_NOT_AVAILABLE, NVML_VALUE_NOT_AVAILABLE};
    return NVML_SUCCESS;
}

}  // namespace

SIM_API nvmlReturn_t nvmlInitWithFlags(unsigned int) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_init_count++ == 0) {
        g_config = sim::read_config();
        if (g_config.devices > kMaxDevices) g_config.devices = kMaxDevices;
        for (int d = 0; d < kMaxDevices; ++d) g_slots[d].ordinal = d;
    }
    return NVML_SUCCESS;
}

SIM_API nvmlReturn_t nvmlInit_v2(void) { return nvmlInitWithFlags(0); }

SIM_API nvmlReturn_t nvmlShutdown(void) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
    --g_init_count;
    return NVML_SUCCESS;
}

SIM_API const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
        case NVML_SUCCESS: return "Success";
        case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
        case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
        case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
        case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
        case NVML_ERROR_NOT_FOUND: return "Not Found";
        case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
        default: return "Unknown Error";
    }
}

SIM_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount) {
    if (!initialized()) return NVML_ERROR_UNINITIALIZED;
    if (!deviceCount) return NVML_ERROR_INVALID_ARGUMENT;
    *deviceCount = unsigned(g_config.devices);
    return NVML_SUCCESS;
}

SIM_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    if (!initialized()) return NVML_ERROR_UNINITIALIZED;
    if (!device || index >= unsigned(g_config.devices)) return NVML_ERROR_INVALID_ARGUMENT;
    *device = reinterpret_cast<nvmlDevice_t>(&g_slots[index]);
    return NVML_SUCCESS;
}

SIM_API nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index) {
    int ordinal;
    if (nvmlReturn_t r = device_ordinal(device, &ordinal)) return r;
    if (!index) return NVML_ERROR_INVALID_ARGUMENT;
    *index = unsigned(ordinal);
    return NVML_SUCCESS;
}

SIM_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
    int ordinal;
    if (nvmlReturn_t r = device_ordinal(device, &ordinal)) return r;
    if (!name) return NVML_ERROR_INVALID_ARGUMENT;
    if (length <= std::strlen(sim::kDeviceName)) return NVML_ERROR_INSUFFICIENT_SIZE;
    std::snprintf(name, length, "%s", sim::kDeviceName);
    return NVML_SUCCESS;
}

SIM_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
    int ordinal;
    if (nvmlReturn_t r = device_ordinal(device, &ordinal)) return r;
    if (!uuid) return NVML_ERROR_INVALID_ARGUMENT;
    char text[41];
    sim::format_nvml_uuid(ordinal, text);
    if (length <= std::strlen(text)) return NVML_ERROR_INSUFFICIENT_SIZE;
    std::snprintf(uuid, length, "%s", text);
    return NVML_SUCCESS;
}

SIM_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory) {
    int ordinal;
    if (nvmlReturn_t r = device_ordinal(device, &ordinal)) return r;
    if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
    enter_query();
    unsigned long long used = simnvml::probe(ordinal).used_bytes + g_config.other_bytes;
    memory->total = g_config.capacity;
    memory->used = used < g_config.capacity ? used : g_config.capacity;
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

SIM_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                             nvmlProcessInfo_t *infos) {
    return running_processes(device, infoCount, infos);
}

SIM_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                             nvmlProcessInfo_v2_t *infos) {
    return running_processes(device, infoCount, infos);
}
