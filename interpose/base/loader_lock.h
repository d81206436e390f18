// Our own calls into the dynamic loader (dl_iterate_phdr, dladdr, dlopen, and libunwind,
// which walks the loaded objects through dl_iterate_phdr on every unwind) hold this lock
// shared; fork takes it exclusively, so no thread of ours is inside the loader at the
// moment the child is made.
//
// Why: glibc does not reset the loader's list lock in a fork child. A child made while
// one of our threads (the writer scanning modules, a hook unwinding) was inside
// dl_iterate_phdr hung forever in its own first unwind: found by hostile testing, as
// DataLoader-style forks from a threaded process (test/integration/programs/lifecycle/fork_child_hang.c,
// run by hostile_test.cpp).
// Sections may nest (a dlopen of ours runs the library's constructors, which may call a
// hook): only a thread's outermost one takes the lock.
//
// NVML and the driver, which we call for our own figures (snapshots, a context's cost),
// may use the loader inside too (a real NVML loads libraries lazily; under
// ThreadSanitizer every dlopen walks the loaded objects), but cannot run inside a
// LoaderUse: fork handlers registered after ours (the driver's) take their locks before
// ours waits, and the call may need one of them (a deadlock ThreadSanitizer found). So
// such a call is a ForeignCall instead, and a child forked while one was running treats
// the loader as unusable: no unwinding, no module scan, no NVML; its events carry no
// stack, and it says so once on stderr (test/integration/survival/hostile_test.cpp).
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

// A call into NVML or the driver made by the tracer itself.
class ForeignCall {
 public:
  ForeignCall();
  ~ForeignCall();
  ForeignCall(const ForeignCall&) = delete;
  ForeignCall& operator=(const ForeignCall&) = delete;
};

// False in a process forked (at any remove) while a thread of ours was in a ForeignCall:
// glibc's lock on the list of loaded objects may be held by a thread that is not here.
bool loader_usable();

void loader_prepare_fork();
void loader_after_fork_parent();
void loader_after_fork_child();

}  // namespace cumemtrace::interpose
