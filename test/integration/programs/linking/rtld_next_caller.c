/* Asks for the definition of which() after its own: must be rtld_next_target's. Were
   our dlsym to lose the caller, glibc would search after libcumemtrace.so and find the
   program's or this library's own definition instead. */
#define _GNU_SOURCE
#include <dlfcn.h>

const char* which(void) { return "caller"; }

const char* next_which(void) {
  const char* (*next)(void) = (const char* (*)(void))dlsym(RTLD_NEXT, "which");
  return next ? next() : "none";
}
