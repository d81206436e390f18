// The bytes of a CUDA array from its descriptor (interpose/hooks/array_size.h), worked out by
// hand from cuda.h's CUarray_format element sizes.
#include <catch2/catch.hpp>

#include "hooks/array_size.h"

using namespace cumemtrace::interpose;

TEST_CASE("array bytes: width x height x depth x channels x channel bytes, absent extents count 1") {
  const CUDA_ARRAY_DESCRIPTOR rgba_float{1024, 768, CU_AD_FORMAT_FLOAT, 4};
  CHECK(array_bytes(&rgba_float) == 12582912);  // 1024 * 768 * 4 * 4
  const CUDA_ARRAY_DESCRIPTOR one_d{1000, 0, CU_AD_FORMAT_UNSIGNED_INT16, 1};
  CHECK(array_bytes(&one_d) == 2000);
  const CUDA_ARRAY3D_DESCRIPTOR half2{64, 64, 16, CU_AD_FORMAT_HALF, 2, 0};
  CHECK(array_bytes(&half2) == 262144);  // 65,536 texels * 4 B
  const CUDA_ARRAY3D_DESCRIPTOR flat{10, 10, 0, CU_AD_FORMAT_SIGNED_INT8, 1, 0};
  CHECK(array_bytes(&flat) == 100);
  CHECK(array_bytes(static_cast<const CUDA_ARRAY_DESCRIPTOR*>(nullptr)) == 0);
}

TEST_CASE("array bytes: packed and block-compressed formats name their own texel size, YUV is unknown") {
  const CUDA_ARRAY_DESCRIPTOR packed{16, 16, CU_AD_FORMAT_UNORM_INT8X4, 1};
  CHECK(array_bytes(&packed) == 1024);  // 256 texels * 4 B
  const CUDA_ARRAY_DESCRIPTOR bc1{10, 10, CU_AD_FORMAT_BC1_UNORM, 4};
  CHECK(array_bytes(&bc1) == 9 * 8);  // 3 x 3 blocks of 4x4, 8 B each
  const CUDA_ARRAY_DESCRIPTOR bc7{8, 4, CU_AD_FORMAT_BC7_UNORM, 4};
  CHECK(array_bytes(&bc7) == 2 * 16);
  const CUDA_ARRAY_DESCRIPTOR nv12{64, 64, CU_AD_FORMAT_NV12, 3};
  CHECK(array_bytes(&nv12) == 0);
}

TEST_CASE("mipmapped arrays: each level halves the extents (at least 1), layers are not halved") {
  const CUDA_ARRAY3D_DESCRIPTOR mip{256, 256, 0, CU_AD_FORMAT_FLOAT, 1, 0};
  CHECK(mipmapped_array_bytes(&mip, 3) == 344064);  // (65,536 + 16,384 + 4,096) * 4
  const CUDA_ARRAY3D_DESCRIPTOR narrow{4, 1, 0, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0};
  CHECK(mipmapped_array_bytes(&narrow, 4) == 4 + 2 + 1 + 1);
  const CUDA_ARRAY3D_DESCRIPTOR volume{8, 8, 8, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0};
  CHECK(mipmapped_array_bytes(&volume, 2) == 512 + 64);
  const CUDA_ARRAY3D_DESCRIPTOR layered{8, 8, 6, CU_AD_FORMAT_UNSIGNED_INT8, 1, CUDA_ARRAY3D_LAYERED};
  CHECK(mipmapped_array_bytes(&layered, 2) == 384 + 96);  // 6 layers of 8x8, then of 4x4
}
