// Which version of a framework a loaded function belongs to, read from the files the
// framework installs beside its libraries, for the trace's BlockSource record: the
// allocator's reports are read by a layout known per version (docs/trace-format.md).
#pragma once

#include <string>

namespace cumemtrace::interpose {

// PyTorch's version ("2.11.0+cu130") for a function of its torch/lib/libc10.so, from the
// `__version__` line of torch/version.py beside that folder; empty when `fn` lies in no
// such library or the file says none. One read of a small file the interpreter read
// when it imported torch; call it once per process.
std::string torch_version_of(const void* fn);

}  // namespace cumemtrace::interpose
