// Stream captures in progress, and the rule that follows from them: while any thread of
// the process has a capture open, the tracer makes no CUDA call of its own — not from the
// writer thread (snapshots, pool sampling), not from a hook (device of an address, device
// facts, context probes). In CUDA's default global capture mode a "potentially unsafe"
// call from any thread fails and invalidates the capture (cuThreadExchangeStreamCaptureMode's
// reference), and CUDA does not document call by call which ones are safe. What the tracer
// would have asked is then left unknown and marked so in the trace (docs/capture-and-fork.md).
//
// Captures are counted by stream from cuStreamBeginCapture*/cuStreamEndCapture* and the
// runtime names, through every lookup path. A runtime call and the driver call beneath it
// insert and erase the same stream, so counting twice is harmless.
#pragma once

#include <cstdint>

namespace cumemtrace::interpose {

// A scope in which the tracer may call the driver itself. A capture cannot begin while
// one is open (the begin hook waits for it: a driver query takes microseconds), and none
// opens while a capture is in progress or beginning.
class OwnCudaCalls {
 public:
  OwnCudaCalls();
  ~OwnCudaCalls();
  OwnCudaCalls(const OwnCudaCalls&) = delete;
  OwnCudaCalls& operator=(const OwnCudaCalls&) = delete;
  explicit operator bool() const { return allowed_; }

 private:
  bool allowed_;
};

// Whether any capture is open now (a hint: may change at once).
bool capture_open();

// Whether `stream` is capturing (stream-ordered allocations there are graph nodes).
bool stream_capturing(uint64_t stream);

// Around the program's cuStreamBeginCapture: `before` waits until no OwnCudaCalls scope
// is open and keeps new ones out; `after` records the capture if the call succeeded.
void capture_begin_before();
void capture_begin_after(uint64_t stream, bool succeeded);
// After the program's cuStreamEndCapture: the capture is over unless the call was refused
// without ending it (`ended` false: wrong thread, bad argument).
void capture_end_after(uint64_t stream, bool ended);

// In a forked child: no capture survives fork (nor does CUDA), and a scope held by a
// thread that does not exist there must not keep captures waiting.
void capture_after_fork_child();

}  // namespace cumemtrace::interpose
