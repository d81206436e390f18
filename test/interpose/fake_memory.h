// Objects built by hand for the Python readers' tests: heap blocks the readers read at
// their addresses, as they read the interpreter's.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

template <class T>
void put(std::vector<uint8_t>& obj, uint64_t off, T v) {
  std::memcpy(obj.data() + off, &v, sizeof v);
}

inline uint64_t addr(const std::vector<uint8_t>& obj) { return reinterpret_cast<uint64_t>(obj.data()); }
