// What every test program prints: one line per allocation and per free, so a
// test can diff stdout with and without the preload library, and compare the
// lines against the trace.
//
//   alloc <api> 0x<address> <bytes>
//   free <api> 0x<address>
//
// Device addresses are deterministic (docs/simulated-driver.md); host blocks
// from the sim come from hinted mmap and repeat run to run as well.
#pragma once

#include <cstdio>
#include <cstdlib>

inline void report_alloc(const char* api, unsigned long long address, unsigned long long bytes) {
  std::printf("alloc %s 0x%llx %llu\n", api, address, bytes);
}

inline void report_alloc(const char* api, const void* address, unsigned long long bytes) {
  report_alloc(api, reinterpret_cast<unsigned long long>(address), bytes);
}

inline void report_free(const char* api, unsigned long long address) { std::printf("free %s 0x%llx\n", api, address); }

inline void report_free(const char* api, const void* address) {
  report_free(api, reinterpret_cast<unsigned long long>(address));
}

// An unexpected error ends the program: a test seeing exit status 1 and this
// line on stderr knows which call failed.
[[noreturn]] inline void die(const char* what, int code) {
  std::fflush(stdout);
  std::fprintf(stderr, "FAILED: %s returned %d\n", what, code);
  std::exit(1);
}
