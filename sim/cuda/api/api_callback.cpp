// Host functions on a stream (cuLaunchHostFunc, cuStreamAddCallback). Streams do no work
// here (api_pool.cpp), so a host function runs at the call, to its end, but as CUDA runs
// it: on the driver's own callback thread, which the program never made, where every call
// into CUDA is refused with CUDA_ERROR_NOT_PERMITTED (cuda.h: a host function "must not
// make any CUDA API calls"). One such thread per process, as the driver's.
#include <unistd.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "driver_state.h"
#include "sim_export.h"

namespace sim {
namespace {

thread_local bool t_on_callback_thread = false;

class CallbackThread {
   public:
    // Runs `fn` on the thread and returns when it has: one at a time.
    void run(std::function<void()> fn) {
        std::lock_guard one(calls_);
        std::unique_lock lock(mu_);
        if (pid_ != getpid()) {  // first use, or a forked child that has no such thread
            pid_ = getpid();
            job_ = nullptr;
            std::thread([this] { loop(); }).detach();
        }
        job_ = std::move(fn);
        done_ = false;
        wake_.notify_all();
        finished_.wait(lock, [&] { return done_; });
    }

   private:
    void loop() {
        t_on_callback_thread = true;
        std::unique_lock lock(mu_);
        for (;;) {
            wake_.wait(lock, [&] { return bool(job_); });
            std::function<void()> fn = std::move(job_);
            job_ = nullptr;
            lock.unlock();
            fn();
            lock.lock();
            done_ = true;
            finished_.notify_all();
        }
    }
    std::mutex calls_, mu_;
    std::condition_variable wake_, finished_;
    std::function<void()> job_;
    bool done_ = false;
    pid_t pid_ = 0;
};

// Never destroyed: the detached thread may still wait on it at exit.
CallbackThread &callback_thread() {
    static CallbackThread *t = new CallbackThread;
    return *t;
}

// Not under the driver's lock: the host function's own calls take it (to be refused).
CUresult launch(CUstream s, std::function<void()> fn) {
    {
        SIM_LOCKED;
        if (CUresult r = check_init()) return r;
        (void)s;  // every stream is idle here: the function runs now
    }
    callback_thread().run(std::move(fn));
    return CUDA_SUCCESS;
}

}  // namespace

bool on_callback_thread() { return t_on_callback_thread; }

}  // namespace sim

using namespace sim;

SIM_API CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *userData) {
    if (!fn) return CUDA_ERROR_INVALID_VALUE;
    return launch(s, [fn, userData] { fn(userData); });
}
SIM_API CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *userData) {
    return cuLaunchHostFunc(s, fn, userData);
}

SIM_API CUresult cuStreamAddCallback(CUstream s, CUstreamCallback fn, void *userData, unsigned int flags) {
    if (!fn || flags) return CUDA_ERROR_INVALID_VALUE;
    return launch(s, [fn, s, userData] { fn(s, CUDA_SUCCESS, userData); });
}
SIM_API CUresult cuStreamAddCallback_ptsz(CUstream s, CUstreamCallback fn, void *userData, unsigned int flags) {
    return cuStreamAddCallback(s, fn, userData, flags);
}
