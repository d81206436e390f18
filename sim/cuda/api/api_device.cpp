// Initialisation, version and device queries.
#include "driver_state.h"
#include "sim_export.h"
#include "sim_uuid.h"

#include <cstdio>
#include <cstring>

using namespace sim;

SIM_API CUresult cuInit(unsigned int flags) {
    SIM_LOCKED;
    State &s = state();
    if (s.forked_child) return CUDA_ERROR_NOT_INITIALIZED;
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    s.initialized = true;
    return s.cfg.devices > 0 ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

SIM_API CUresult cuDriverGetVersion(int *version) {
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    *version = 13000;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGetCount(int *count) {
    SIM_LOCKED;
    const CaptureSafeCall safe;
    if (CUresult r = check_init()) return r;
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    *count = state().cfg.devices;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGet(CUdevice *device, int ordinal) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    std::snprintf(name, size_t(len), "%s", kDeviceName);
    return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = state().cfg.capacity;
    return CUDA_SUCCESS;
}

namespace {
CUresult get_uuid(CUuuid *uuid, CUdevice dev) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    unsigned char bytes[16];
    device_uuid(dev, bytes);
    std::memcpy(uuid->bytes, bytes, 16);
    return CUDA_SUCCESS;
}

// A handful of H200 (sm_90, 132 SMs) values that programs commonly branch on.
struct AttributeValue {
    CUdevice_attribute attr;
    int value;
};
constexpr AttributeValue kAttributes[] = {
    {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024},
    {CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32},
    {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132},
    {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9},
    {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},
    {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1},
    {CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1},
    {CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 1},
    {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1},
    {CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1},
    {CU_DEVICE_ATTRIBUTE_INTEGRATED, 0},
    {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 1},
    {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 6144},
    {CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, 0},
    {CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 0},
};

// PCI buses of the GPUs in the 8-GPU H200 node we measured on.
constexpr int kPciBus[] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
int pci_bus(int dev) { return dev < 8 ? kPciBus[dev] : 0xe0 + dev; }
}  // namespace

SIM_API CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { return get_uuid(uuid, dev); }
SIM_API CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) { return get_uuid(uuid, dev); }

SIM_API CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!pi || attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *pi = 0;  // attributes we do not model read as "absent/zero"
    if (attrib == CU_DEVICE_ATTRIBUTE_PCI_BUS_ID) *pi = pci_bus(dev);
    for (const auto &a : kAttributes)
        if (a.attr == attrib) *pi = a.value;
    return CUDA_SUCCESS;
}

SIM_API CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev) {
    SIM_LOCKED;
    if (CUresult r = check_init()) return r;
    if (!pciBusId || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    std::snprintf(pciBusId, size_t(len), "00000000:%02X:00.0", pci_bus(dev));
    return CUDA_SUCCESS;
}
