// Load, fork and exit. Nothing here runs CUDA or touches the disk at load time: the
// trace starts with the first CUDA event (tracker.cpp), not with the process.
#include <pthread.h>

#include "capture.h"
#include "loader_lock.h"
#include "owner.h"
#include "python_frames.h"
#include "python_walk.h"
#include "thread_state.h"
#include "trace_start.h"
#include "tracker.h"
#include "writer.h"

namespace cumemtrace::interpose {
namespace {

void prepare_fork() {
  loader_prepare_fork();  // before the tracker: nothing holds the tracker while in the loader
  tracker_prepare_fork();
}
void after_fork_parent() {
  tracker_after_fork_parent();
  loader_after_fork_parent();
}
void after_fork_child() {
  own_this_process();
  forget_own_pid();
  forget_python_look_after_fork();
  capture_after_fork_child();
  loader_after_fork_child();
  mark_trace_start();
  reset_thread_state_after_fork();
  tracker_after_fork_child();
  writer_after_fork_child();
}

__attribute__((constructor)) void on_load() {
  own_this_process();
  mark_trace_start();
  pthread_atfork(prepare_fork, after_fork_parent, after_fork_child);
}

// A preloaded library is finalized after the libraries loaded later (CUDA, PyTorch)
// and after the program's atexit handlers, so most frees made at exit are seen before
// this runs. Later ones are forwarded and not recorded.
__attribute__((destructor)) void on_unload() { finish_writer(); }

}  // namespace
}  // namespace cumemtrace::interpose
