// Load, fork, exit and what starts with the trace. Nothing here runs CUDA or touches the
// disk at load time: the trace starts with the first CUDA event (tracker.cpp), not with
// the process.
#include <pthread.h>

#include <atomic>
#include <cstdlib>

#include "probe/stream_capture.h"
#include "write/fatal_signal.h"
#include "base/loader_lock.h"
#include "base/log.h"
#include "probe/nvml.h"
#include "api/nvtx.h"
#include "base/owner.h"
#include "stacks/python_frames.h"
#include "stacks/python_walk.h"
#include "probe/sampler.h"
#include "stacks/stack.h"
#include "stacks/walk_stats.h"
#include "base/thread_state.h"
#include "base/trace_start.h"
#include "track/tracker.h"
#include "track/trace_sink.h"
#include "track/writer_thread.h"

namespace cumemtrace::interpose {
namespace {

// The rule (docs/capture-and-fork.md): every lock a child may take is either held across
// the fork by the forking thread, or started afresh in the child, and no one-time
// initialisation is left half done by a thread the child does not have.
void prepare_fork() {
  stack_prepare_fork();          // its one-time set-up uses the loader: before the loader's lock
  sampler_prepare_fork();        // first of the locks: its late callback may take the tracker's lock
  writer_thread_prepare_fork();  // before the loader's and the tracker's locks, which its round takes
  nvtx_prepare_fork();           // before the tracker's: an NVTX end records its mark under it
  loader_prepare_fork();         // before the tracker: nothing holds the tracker while in the loader
  tracker_prepare_fork();
}
void after_fork_parent() {
  tracker_after_fork_parent();
  loader_after_fork_parent();
  nvtx_after_fork_parent();
  writer_thread_after_fork_parent();
  sampler_after_fork_parent();
}
void after_fork_child() {
  own_this_process();
  log_after_fork_child();
  nvtx_after_fork_child();
  nvml_after_fork_child();
  fatal_signals_after_fork_child();
  forget_own_pid();
  forget_python_look_after_fork();
  capture_after_fork_child();
  loader_after_fork_child();
  mark_trace_start();
  reset_thread_state_after_fork();
  tracker_after_fork_child();
  writer_thread_after_fork_child();
}

// quick_exit runs the at_quick_exit handlers, then _exit from inside libc, past our hook:
// no destructor, no hooked _exit, so without this the trace lost its tail or was never
// created. Registered at load, before the program's own handlers, so it runs after them
// (handlers run in reverse order) and sees what they free. A vfork child's quick_exit
// would be its parent's trace: it touches nothing (owner.h).
void on_quick_exit() {
  if (!in_borrowed_memory()) finish_trace();
}

__attribute__((constructor)) void on_load() {
  own_this_process();
  logger();  // made here, so no fork ever finds its one-time set-up half done
  mark_trace_start();
  pthread_atfork(prepare_fork, after_fork_parent, after_fork_child);
  at_quick_exit(on_quick_exit);
}

// A preloaded library is finalized after the libraries loaded later (CUDA, PyTorch)
// and after the program's atexit handlers, so most frees made at exit are seen before
// this runs. Later ones are forwarded and not recorded.
__attribute__((destructor)) void on_unload() {
  walk_stats_report();
  finish_trace();
}

}  // namespace

namespace {
// exit()'s status reaches on_exit handlers only, which run in the reverse order of their
// registering: one registered after __libc_start_main registered the loader's finalizer
// runs before that finalizer runs our destructor (which writes the End record); one
// registered before (a trace started by a library's constructor, before main) runs after
// it, too late. So the handler is registered when the trace starts and again when main
// starts if the trace had started before; a second run of it changes nothing.
std::atomic<bool> g_main_started{false}, g_trace_started{false};
void note_status_at_exit() {
  on_exit([](int status, void*) { note_exit_status(status); }, nullptr);
}
}  // namespace

// The trace started (track/trace_sink.h): the fatal signals' last flush is armed, and a
// user whose NVTX calls go to another tool is told so.
void on_trace_start() {
  arm_fatal_signals();
  g_trace_started.store(true);
  note_status_at_exit();
  warn_if_nvtx_elsewhere();
}

void on_main_start() {
  g_main_started.store(true);
  if (g_trace_started.load()) note_status_at_exit();
}

}  // namespace cumemtrace::interpose
