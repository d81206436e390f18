// Baseline keys of call sites (baseline.h): a Python line when the allocation came from
// Python (trace 1.6), the native call-site frame otherwise.
#include "catch.h"

#include "gate/baseline.h"

using namespace cumemtrace;

TEST_CASE("a call site with Python frames is keyed by its innermost Python file, function and line") {
  SiteRow row;
  row.library = "libc10_cuda.so";
  Frame native;
  native.function = "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc";
  row.frames = {native};
  CHECK(site_key(row) == "libc10_cuda.so c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc");
  Frame inner, outer;
  inner.python = outer.python = true;
  inner.file = "/w/train.py";
  inner.function = "forward";
  inner.line = 88;
  outer.file = "/w/train.py";
  outer.function = "<module>";
  outer.line = 120;
  row.python_frames = {inner, outer};
  CHECK(site_key(row) == "python train.py:forward:88");  // the file as keys hold it (stacks.h: source_key)
}
