// A native thread that calls back into Python again and again and, between the calls,
// allocates with no Python on its stack (test/integration/python/python_foreign_thread.py). Each
// callback from a thread Python did not start gets a thread state of its own from
// PyGILState_Ensure, freed again by PyGILState_Release: the thread's state comes and goes
// under one thread id, which is what the tracer's cached thread state must not outlive.
#include <pthread.h>

#include <cstddef>

namespace {

using Callback = int (*)(int);
using Malloc = int (*)(void**, size_t);

struct Job {
  Callback callback;
  Malloc allocate;
  int rounds;
  size_t native_bytes;
  int failures;
};

void* run(void* p) {
  auto* job = static_cast<Job*>(p);
  for (int i = 0; i < job->rounds; ++i) {
    if (job->callback(i) != 0) ++job->failures;
    void* kept = nullptr;
    if (job->allocate(&kept, job->native_bytes) != 0) ++job->failures;
  }
  return nullptr;
}

}  // namespace

// Runs `rounds` rounds on a new thread and waits for it: 0, or how many calls failed.
extern "C" int run_foreign_thread(Callback callback, Malloc allocate, int rounds, size_t native_bytes) {
  Job job{callback, allocate, rounds, native_bytes, 0};
  pthread_t thread;
  if (pthread_create(&thread, nullptr, run, &job) != 0) return -1;
  pthread_join(thread, nullptr);
  return job.failures;
}
