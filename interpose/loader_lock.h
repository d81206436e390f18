// Our own calls into the dynamic loader (dl_iterate_phdr, dladdr, dlopen, and libunwind,
// which walks the loaded objects through dl_iterate_phdr on every unwind) hold this lock
// shared; fork takes it exclusively, so no thread of ours is inside the loader at the
// moment the child is made.
//
// Why: glibc does not reset the loader's list lock in a fork child. A child made while
// one of our threads (the writer scanning modules, a hook unwinding) was inside
// dl_iterate_phdr hung forever in its own first unwind: found by hostile testing, as
// DataLoader-style forks from a threaded process (test/integration/fork_stress_test.cpp).
// Sections never nest, so the writer-preferring lock cannot deadlock on itself.
#pragma once

#include <pthread.h>

namespace cumemtrace::interpose {

class LoaderUse {
 public:
  LoaderUse();
  ~LoaderUse();
  LoaderUse(const LoaderUse&) = delete;
  LoaderUse& operator=(const LoaderUse&) = delete;
};

void loader_prepare_fork();
void loader_after_fork_parent();
void loader_after_fork_child();

}  // namespace cumemtrace::interpose
