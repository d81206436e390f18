// Which frames belong to an allocator (issue "Python frames in every stack", §2): the
// call site of an allocation is the innermost frame outside the tracer, the CUDA
// libraries and these, so that a PyTorch tensor's call site is the operator or the
// Python line that asked for it, not DeviceCachingAllocator::alloc_block.
//
// A frame is an allocator's when its function name (demangled, as symbolized) matches
// one of the default patterns below or one given with --allocator-frames; frames
// without a name never match. --no-allocator-skip turns the skipping off. The library
// an allocation is charged to (bytes by library, "from libc10_cuda.so") stays the
// module of the first frame outside the tracer and CUDA: the allocator that holds it.
//
// Default patterns (ECMAScript regular expressions, searched in the function name):
//   PyTorch   ^c10::cuda::CUDACachingAllocator::   ^c10::cuda::CUDAAllocator
//             ^c10::cuda::MemPool   ^at::detail::empty_   ^at::(native::|_ops::|cuda::)?empty
//             ^at::native::(resize_|create_out|structured_.*set_output)   ^at::TensorBase::
//             ^c10::StorageImpl   ^c10::Allocator   ^c10::DataPtr   set_output_raw_strided
//   CuPy      cupy.*[Mm]emory(Pool|Pointer)|cupy_backends.*malloc|__pyx_.*4cupy.*memory
//   XLA       ^stream_executor::.*(Allocat|DeviceMemory)   ^xla::.*Allocat   ^tsl::BFCAllocator
//             ^tensorflow::.*BFCAllocator
//   RMM       ^rmm::mr::
//   static CUDA runtime inside another module   ^libcudart_static_   ^cuda[A-Z][A-Za-z0-9_]*$
//   NVTX's own functions (header-only, in every caller)   ^nvtx[A-Z][A-Za-z0-9_]*$
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cumemtrace {

// For this run of the command line: the defaults and `extra`, and whether to skip at all
// (replacing what an earlier call set). Patterns are POSIX extended regular expressions
// (regcomp(3), REG_EXTENDED) searched anywhere in the function's name. Throws
// std::invalid_argument for a pattern that does not compile or uses a back-reference,
// changing nothing.
void set_allocator_frames(const std::vector<std::string>& extra, bool skip);

bool is_allocator_frame(std::string_view function);
// Whether allocator frames are skipped at all (false after --no-allocator-skip).
bool allocator_skip();

}  // namespace cumemtrace
