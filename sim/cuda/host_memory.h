// Real host memory for cuMemAllocHost/cuMemHostAlloc/cuMemAllocManaged, which
// programs read and write.
//
// The sim's device addresses (0x7f0000000000 and up) are plain numbers that
// are not reserved in the process's address space, and the kernel places mmap
// regions around 0x7fxxxxxxxxxx too. So host blocks are mapped at hinted
// addresses from 0x200000000000 upwards, far from any device region: a pointer
// is then either host or device, never both, and the addresses repeat run to run.
#pragma once

#include <cstdint>

namespace sim {

void *host_map(uint64_t size);
void host_unmap(void *p, uint64_t size);

}  // namespace sim
