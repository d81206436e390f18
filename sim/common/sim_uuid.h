// The identity of simulated device `ordinal`, shared by libcuda (cuDeviceGetUuid)
// and libnvidia-ml (nvmlDeviceGetUUID) so that tools can join the two, as they
// do on real hardware.
#pragma once

#include <cstdio>

namespace sim {

// "simcuda-h200" then the ordinal, big-endian: recognisable in a hex dump and
// never equal to a real GPU's UUID.
inline void device_uuid(int ordinal, unsigned char out[16]) {
    static const char prefix[12] = {'s', 'i', 'm', 'c', 'u', 'd', 'a', '-', 'h', '2', '0', '0'};
    for (int i = 0; i < 12; ++i) out[i] = static_cast<unsigned char>(prefix[i]);
    for (int i = 0; i < 4; ++i) out[12 + i] = static_cast<unsigned char>(unsigned(ordinal) >> (8 * (3 - i)));
}

// NVML's text form: "GPU-" and the 16 bytes as 8-4-4-4-12 lower-case hex.
inline void format_nvml_uuid(int ordinal, char out[41]) {
    unsigned char b[16];
    device_uuid(ordinal, b);
    std::snprintf(out, 41, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
                  b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

inline constexpr const char *kDeviceName = "NVIDIA H200 (simulated)";

}  // namespace sim
