// Which process owns the tracer's state. A vfork child (CPython's subprocess, Triton's
// compiler launches, clone with CLONE_VM) runs in its parent's memory until it execs or
// exits: whatever a hook there changes in our state — the writer, its file, the pending
// records — it changes in the parent, whose trace it then cuts short. fork's handlers
// (pthread_atfork) do not run for vfork, so the child is recognised by its pid.
#pragma once

namespace cumemtrace::interpose {

// At load, and in a forked child (lifecycle.cpp).
void own_this_process();

// True in a child that shares its parent's memory: hooks that may run there (exec,
// _exit) only forward. getpid() is a system call: keep this off the allocation path.
bool in_borrowed_memory();

}  // namespace cumemtrace::interpose
