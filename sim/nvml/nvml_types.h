// The part of NVML's C API the sim implements. There is no nvml.h on the build
// machines, so the declarations are copied here from the NVML API Reference
// (https://docs.nvidia.com/deploy/nvml-api/), keeping names, values and layouts.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

// nvmlReturn_t: "Return values for NVML API calls" (Device Enums / nvmlReturn_t).
typedef enum nvmlReturn_enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_INSUFFICIENT_POWER = 8,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

// nvmlDevice_t: an opaque handle ("typedef struct nvmlDevice_st* nvmlDevice_t").
typedef struct nvmlDevice_st *nvmlDevice_t;

// nvmlMemory_t (Device Structs / nvmlMemory_t): bytes.
typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

// nvmlProcessInfo_v2_t and nvmlProcessInfo_t (the one _v3 fills) share this
// layout (Device Structs / nvmlProcessInfo_t). gpuInstanceId and
// computeInstanceId are 0xFFFFFFFF when MIG is not in use.
typedef struct nvmlProcessInfo_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;
typedef nvmlProcessInfo_t nvmlProcessInfo_v2_t;

// Buffer sizes (Constants): NVML_DEVICE_NAME_BUFFER_SIZE, NVML_DEVICE_UUID_BUFFER_SIZE.
#define NVML_DEVICE_NAME_BUFFER_SIZE 64
#define NVML_DEVICE_UUID_BUFFER_SIZE 80
#define NVML_VALUE_NOT_AVAILABLE 0xFFFFFFFFu

// Initialization and Cleanup.
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlInitWithFlags(unsigned int flags);
nvmlReturn_t nvmlShutdown(void);
// Error reporting.
const char *nvmlErrorString(nvmlReturn_t result);
// Device Queries.
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v2_t *infos);

#ifdef __cplusplus
}
#endif
