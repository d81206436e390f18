// The records inside a CompressedRecord (trace format 1.7), for the reader and `dump`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cumemtrace {

// `payload`: a CompressedRecord's payload (its fixed part, then one zstd frame). Fills
// `raw` with the records inside and returns "", or returns what is wrong (unknown codec,
// a size over format::kMaxCompressedRawBytes, a frame that does not decompress to exactly
// the announced size).
std::string inflate_records(const uint8_t* payload, size_t n, std::vector<uint8_t>& raw);

}  // namespace cumemtrace
