// Linked only into the link checks (interpose/CMakeLists.txt), never into the library.
// resolve/ hands the program the hooks stage's wrappers (resolve.h, slot_wrapper): a call
// up the chain, kept because the wrapper table must be there from the first dlsym, which
// can come before any constructor that could register it.
#include "hook_ids.h"

namespace cumemtrace::interpose {
void* slot_wrapper(HookId, int) { return nullptr; }
}  // namespace cumemtrace::interpose
