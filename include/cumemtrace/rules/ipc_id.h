// The identity of a CUDA IPC memory handle, as both traces of an exchange record it
// (docs/trace-format.md, "1.15: CUDA IPC handles' identity"): the exporter's
// cuIpcGetMemHandle returns the handle's 64 bytes and the importer's cuIpcOpenMemHandle is
// given the same 64 bytes, so a hash of them pairs the two traces. The bytes are opaque
// (a real driver's say nothing a reader could decode), so the whole of them is hashed:
// 64-bit FNV-1a. 0 stays "no identity", so a hash of 0 is written as 1.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cumemtrace::format {

inline constexpr size_t kIpcHandleBytes = 64;  // CU_IPC_HANDLE_SIZE, CUDA_IPC_HANDLE_SIZE

// `bytes`: CUipcMemHandle::reserved or cudaIpcMemHandle_t::reserved (char), or unsigned.
template <class Byte>
constexpr uint64_t ipc_id(const Byte (&bytes)[kIpcHandleBytes]) {
  static_assert(sizeof(Byte) == 1);
  uint64_t h = 0xcbf29ce484222325ull;                            // FNV-1a 64's offset basis
  for (Byte b : bytes) h = (h ^ uint8_t(b)) * 0x100000001b3ull;  // and its prime
  return h ? h : 1;
}

}  // namespace cumemtrace::format
