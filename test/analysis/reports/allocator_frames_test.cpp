// The call site moves past an allocator's frames (analysis/stacks/allocator_frames.h); the
// library the bytes are charged to stays the allocator's.
#include <set>

#include "stacks/allocator_frames.h"
#include "stacks/call_site_rule.h"
#include "catch.h"
#include "reports/report.h"
#include "report_both.h"
#include "trace_builder.h"
#include "sizes.h"

using namespace cumemtrace;
using cumemtrace::test::report_both;
using cumemtrace::test::TraceBuilder;
namespace fmt = cumemtrace::format;

namespace {

// cudaMalloc from PyTorch's caching allocator, from ATen's empty_cuda, from an operator
// in libtorch_cuda.so, from a program's main: innermost first 0x1100, 0x2100, 0x3100, 0x4100.
Report pytorch_like() {
  TraceBuilder b;
  b.process().device(0, 1024 * MiB);
  b.module(0, 0x1000, 0x2000, "/opt/torch/lib/libc10_cuda.so")
      .module(0, 0x2000, 0x3000, "/opt/torch/lib/libtorch_cuda.so");
  b.module(0, 0x3000, 0x4000, "/opt/torch/lib/libtorch_cpu.so").module(0, 0x4000, 0x5000, "/usr/bin/train");
  b.stack(1, 0, 0x4100).stack(2, 1, 0x3100).stack(3, 2, 0x2100).stack(4, 3, 0x1100);
  b.symbol(0x1100, "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::alloc_block(AllocParams&)", "", 0);
  b.symbol(0x2100, "at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)", "", 0);
  b.symbol(0x3100, "at::native::addmm_out_cuda_impl(at::Tensor&)", "Blas.cpp", 310);
  b.symbol(0x4100, "main", "train.cpp", 12);
  b.alloc(1'000'000, 0x7f0000000000, 64 * MiB, 4);
  b.end(2'000'000);
  return report_both(b, "t.trace");
}

}  // namespace

// Issue 25 §5 changed this test's site from the operator (addmm_out_cuda_impl, in
// libtorch_cuda) to the program's own frame: an operator is the framework's, not the user's.
TEST_CASE("allocator frames: the call site is the program's frame past PyTorch's allocator, ATen and the operator") {
  set_allocator_frames({}, true);
  const Report r = pytorch_like();
  const auto& sites = r.devices.at(0).top_sites;
  REQUIRE(sites.size() == 1);
  CHECK(sites[0].library == "libc10_cuda.so");  // charged to the allocator that holds it
  REQUIRE_FALSE(sites[0].frames.empty());
  CHECK(sites[0].frames[0].function == "main");
  CHECK(sites[0].frames[0].line == 12);
  set_call_site_rule(CallSiteRule::kInnermost, {});  // innermost: the allocator's own frame
  CHECK(pytorch_like().devices.at(0).top_sites.at(0).frames.at(0).function.starts_with(
      "c10::cuda::CUDACachingAllocator"));
  set_call_site_rule(CallSiteRule::kUser, {});
}

TEST_CASE("allocator frames: --no-allocator-skip keeps the allocator's frame, --allocator-frames adds patterns") {
  set_allocator_frames({}, false);
  CHECK(pytorch_like().devices.at(0).top_sites.at(0).frames.at(0).function.starts_with(
      "c10::cuda::CUDACachingAllocator"));
  set_allocator_frames({"^at::native::addmm"}, true);
  CHECK(pytorch_like().devices.at(0).top_sites.at(0).frames.at(0).function == "main");
  CHECK_THROWS_AS(set_allocator_frames({"("}, true), std::invalid_argument);
  CHECK_THROWS_AS(set_allocator_frames({"(a)\\1"}, true), std::invalid_argument);  // a back-reference
  // A pattern that sends a backtracking matcher into exponential time: an automaton
  // answers at once (a timeout of this test's run would be the failure).
  set_allocator_frames({"^(a+)+$"}, true);
  CHECK_FALSE(is_allocator_frame(std::string(64, 'a') + "b"));
  CHECK(is_allocator_frame(std::string(64, 'a')));
  set_allocator_frames({}, true);  // the defaults again, for the tests that follow
  CHECK(is_allocator_frame("rmm::mr::cuda_memory_resource::do_allocate(unsigned long)"));
  CHECK(is_allocator_frame("stream_executor::gpu::GpuDriver::DeviceAllocate(Context*, unsigned long)"));
  // CuPy on the H200 (docs/validation.md, run H): static cudart inside its extension, then
  // its Cython allocation path, all skipped to the Python frame that called zeros().
  CHECK(is_allocator_frame("libcudart_static_5382377d5c772c9d197c0cda9fd9742ee6ad893c"));
  CHECK(is_allocator_frame("cudaMalloc"));
  CHECK(is_allocator_frame("__pyx_f_13cupy_backends_4cuda_3api_7runtime_malloc(unsigned long, int)"));
  CHECK(is_allocator_frame("__pyx_pw_4cupy_4cuda_6memory_6Memory_1__init__(_object*, _object*, _object*)"));
  CHECK_FALSE(is_allocator_frame("cudaMallocWrapper(int)"));  // a program's own function
  CHECK_FALSE(is_allocator_frame("main"));
  CHECK_FALSE(is_allocator_frame(""));
}

TEST_CASE("a call site says which threads allocated what it holds") {
  TraceBuilder b;
  b.process().device(0, 1024 * MiB).stack(1, 0, 0x401000).stack(2, 0, 0x402000);
  auto by = [&](uint64_t t, uint64_t address, uint32_t stack, uint32_t tid) {
    auto e = TraceBuilder::ev(t, fmt::Op::kAlloc, fmt::Kind::kDevice, address, 2 * MiB, 0, stack, 1);
    e.tid = tid;
    b.event(e);
  };
  by(1'000'000, 0x7f0000000000, 1, 4242);
  by(2'000'000, 0x7f0000200000, 1, 4250);
  by(3'000'000, 0x7f0000400000, 2, 4250);
  b.end(4'000'000);
  const Report r = report_both(b, "t.trace");
  const auto& sites = r.devices.at(0).top_sites;
  REQUIRE(sites.size() == 2);
  CHECK(sites[0].threads == std::set<uint32_t>{4242, 4250});  // 4 MiB from stack 1
  CHECK(sites[1].threads == std::set<uint32_t>{4250});
}
