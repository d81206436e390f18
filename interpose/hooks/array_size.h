// The bytes a CUDA array holds, worked out from the descriptor the program passed.
//
// An array has no device pointer and no size query that is safe during a capture, so the
// tracer counts the texels the descriptor asks for: width x max(height,1) x max(depth,1)
// x bytes per texel, where bytes per texel is NumChannels x the channel size of Format
// (cuda.h's CUarray_format: 8-bit formats 1 B, 16-bit and HALF 2 B, 32-bit and FLOAT 4 B).
// The packed formats name their channels themselves (UNORM_INT8X4: 4 B a texel, whatever
// NumChannels says); block-compressed formats take 8 B (BC1, BC4) or 16 B (the others)
// per 4x4 block. YUV formats: 0 (not known). The driver pads arrays for its texture
// layout, so the memory it takes is at least this, never less (docs/trace-format.md, 1.9).
#pragma once

#include <cuda.h>

#include <cstdint>

namespace cumemtrace::interpose {

// Bytes of one level: w x h x d texels (each at least 1) of `format`; 0 when unknown.
inline uint64_t array_level_bytes(uint64_t w, uint64_t h, uint64_t d, CUarray_format format, unsigned channels) {
  w = w ? w : 1, h = h ? h : 1, d = d ? d : 1;
  uint64_t per_channel = 0, per_texel = 0, per_block = 0;
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8: per_channel = 1; break;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF: per_channel = 2; break;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT: per_channel = 4; break;
    case CU_AD_FORMAT_UNORM_INT8X1:
    case CU_AD_FORMAT_SNORM_INT8X1: per_texel = 1; break;
    case CU_AD_FORMAT_UNORM_INT8X2:
    case CU_AD_FORMAT_SNORM_INT8X2:
    case CU_AD_FORMAT_UNORM_INT16X1:
    case CU_AD_FORMAT_SNORM_INT16X1: per_texel = 2; break;
    case CU_AD_FORMAT_UNORM_INT8X4:
    case CU_AD_FORMAT_SNORM_INT8X4:
    case CU_AD_FORMAT_UNORM_INT16X2:
    case CU_AD_FORMAT_SNORM_INT16X2:
    case CU_AD_FORMAT_UNORM_INT_101010_2: per_texel = 4; break;
    case CU_AD_FORMAT_UNORM_INT16X4:
    case CU_AD_FORMAT_SNORM_INT16X4: per_texel = 8; break;
    case CU_AD_FORMAT_BC1_UNORM:
    case CU_AD_FORMAT_BC1_UNORM_SRGB:
    case CU_AD_FORMAT_BC4_UNORM:
    case CU_AD_FORMAT_BC4_SNORM: per_block = 8; break;
    case CU_AD_FORMAT_BC2_UNORM:
    case CU_AD_FORMAT_BC2_UNORM_SRGB:
    case CU_AD_FORMAT_BC3_UNORM:
    case CU_AD_FORMAT_BC3_UNORM_SRGB:
    case CU_AD_FORMAT_BC5_UNORM:
    case CU_AD_FORMAT_BC5_SNORM:
    case CU_AD_FORMAT_BC6H_UF16:
    case CU_AD_FORMAT_BC6H_SF16:
    case CU_AD_FORMAT_BC7_UNORM:
    case CU_AD_FORMAT_BC7_UNORM_SRGB: per_block = 16; break;
    default: return 0;
  }
  if (per_block) return ((w + 3) / 4) * ((h + 3) / 4) * d * per_block;
  if (!per_texel) per_texel = per_channel * channels;
  return w * h * d * per_texel;
}

inline uint64_t array_bytes(const CUDA_ARRAY_DESCRIPTOR* a) {
  return a ? array_level_bytes(a->Width, a->Height, 1, a->Format, a->NumChannels) : 0;
}
inline uint64_t array_bytes(const CUDA_ARRAY3D_DESCRIPTOR* a) {
  return a ? array_level_bytes(a->Width, a->Height, a->Depth, a->Format, a->NumChannels) : 0;
}

// A mipmapped array: the sum over its levels, each level's extent halved from the one
// before (at least 1). The depth of a layered or cubemap array counts layers/faces, which
// every level has, so it is not halved.
inline uint64_t mipmapped_array_bytes(const CUDA_ARRAY3D_DESCRIPTOR* a, unsigned levels) {
  if (!a) return 0;
  const bool layers = a->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP);
  uint64_t total = 0;
  for (unsigned l = 0; l < levels && l < 64; ++l) {
    auto half = [l](uint64_t x) { return x ? (x >> l ? x >> l : 1) : 0; };
    total += array_level_bytes(half(a->Width), half(a->Height), layers ? a->Depth : half(a->Depth), a->Format,
                               a->NumChannels);
  }
  return total;
}

}  // namespace cumemtrace::interpose
