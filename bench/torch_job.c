/* A PyTorch training job's tensors on the stand-in for PyTorch's caching allocator
 * (sim/torch/simtorch.h), whose blocks the tracer records as it does PyTorch's: the
 * block-event traces of bench/run_scale.sh (docs/performance.md, "The scale table").
 *   torch_job TENSORS [KEPT] [marks]    (default 1000000 tensors, 0 kept)
 * Each step allocates 1,000 tensors: an input batch first (64 KiB, once a step: the stack
 * the report finds the loop from when there are no marks), then 333 layers of an
 * activation (4 KiB), a scratch tensor freed at once (2 KiB) and a gradient (8 KiB); at the
 * step's end the activations and gradients are freed, the last first, except KEPT / steps
 * of the activations, kept for good (a tensor kept per step, as a history list keeps one).
 * With "marks", each step starts with cumemtrace_mark("step"). Small tensors, so that a
 * million kept fit the simulated device. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simtorch.h"

#define KiB ((size_t)1 << 10)
enum { kPerStep = 1000, kLayers = 333 };

/* One function per call site: distinct stacks the linker must not fold together. */
static volatile int sites[4];
__attribute__((noinline)) static void* input_batch(void) {
  ++sites[0];
  void* volatile p = simtorch_malloc(64 * KiB, 0); /* no tail call: this frame stays on the stack */
  return p;
}
__attribute__((noinline)) static void* activation(void) {
  ++sites[1];
  void* volatile p = simtorch_malloc(4 * KiB, 0);
  return p;
}
__attribute__((noinline)) static void* scratch(void) {
  ++sites[2];
  void* volatile p = simtorch_malloc(2 * KiB, 0);
  return p;
}
__attribute__((noinline)) static void* gradient(void) {
  ++sites[3];
  void* volatile p = simtorch_malloc(8 * KiB, 0);
  return p;
}

int main(int argc, char** argv) {
  const long tensors = argc > 1 ? atol(argv[1]) : 1000000;
  const long kept = argc > 2 ? atol(argv[2]) : 0;
  typedef int (*mark_fn)(const char*);
  const mark_fn mark = argc > 3 && strcmp(argv[3], "marks") == 0 ? (mark_fn)dlsym(RTLD_DEFAULT, "cumemtrace_mark") : 0;
  const long steps = tensors / kPerStep;
  const long keep_per_step = steps > 0 ? kept / steps : 0;
  if (keep_per_step > kLayers) return 2;
  static void* acts[kLayers];
  static void* grads[kLayers];
  long made = 0, made_kept = 0;
  for (long step = 0; step < steps; ++step) {
    if (mark) mark("step");
    void* batch = input_batch();
    if (!batch) return 1;
    for (int l = 0; l < kLayers; ++l) {
      acts[l] = activation();
      void* tmp = scratch();
      grads[l] = gradient();
      if (!acts[l] || !tmp || !grads[l]) return 1;
      simtorch_free(tmp);
    }
    for (int l = kLayers - 1; l >= 0; --l) {
      simtorch_free(grads[l]);
      if (l < keep_per_step) ++made_kept;
      else simtorch_free(acts[l]);
    }
    simtorch_free(batch);
    made += kPerStep;
  }
  printf("%ld tensors in %ld steps, %ld kept\n", made, steps, made_kept);
  return 0;
}
