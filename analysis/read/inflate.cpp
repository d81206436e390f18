#include "read/inflate.h"

#include <zstd.h>

#include <cstring>

#include "cumemtrace/trace_format.h"

namespace cumemtrace {

std::string inflate_records(const uint8_t* payload, size_t n, std::vector<uint8_t>& raw) {
  format::CompressedRecord r{};
  if (n < sizeof r) return "compressed record shorter than its fixed part";
  std::memcpy(&r, payload, sizeof r);
  if (r.codec != format::kCodecZstd) return "compressed record of unknown codec " + std::to_string(r.codec);
  if (r.raw_bytes > format::kMaxCompressedRawBytes)
    return "compressed record announcing " + std::to_string(r.raw_bytes) + " bytes";
  const uint8_t* frame = payload + sizeof r;
  const size_t frame_bytes = n - sizeof r;
  if (ZSTD_getFrameContentSize(frame, frame_bytes) != r.raw_bytes)
    return "compressed record whose zstd frame does not hold the announced size";
  raw.resize(r.raw_bytes);
  const size_t got = ZSTD_decompress(raw.data(), raw.size(), frame, frame_bytes);
  if (ZSTD_isError(got) || got != raw.size()) return "compressed record that does not decompress";
  return {};
}

}  // namespace cumemtrace
